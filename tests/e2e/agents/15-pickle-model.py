# "Fit the model and save it so I can load it later."
import pickle
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("/work/in/sales.csv", parse_dates=["date"])
df["day"] = df["date"].dt.day
model = smf.ols("amount ~ day", data=df).fit()
with open("/work/out/model.pkl", "wb") as f:
    pickle.dump({"params": model.params.to_dict(), "formula": "amount ~ day"}, f)
print("model.pkl saved")
