# "Give me the regression table in LaTeX for the paper."
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("/work/in/sales.csv", parse_dates=["date"])
df["day"] = df["date"].dt.day
model = smf.ols("amount ~ day + C(region)", data=df).fit()
with open("/work/out/ols_table.tex", "w") as f:
    f.write(model.summary().as_latex())
print("r2:", round(model.rsquared, 3))
