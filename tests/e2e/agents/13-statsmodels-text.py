# "Is there a trend in the order amounts? Fit a regression."
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("/work/in/sales.csv", parse_dates=["date"])
df["day"] = df["date"].dt.day
model = smf.ols("amount ~ day", data=df).fit()
with open("/work/out/ols_summary.txt", "w") as f:
    f.write(str(model.summary()))
print(model.params.round(3).to_dict())
