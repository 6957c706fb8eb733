# "Total the sales per region and save them as CSV."
import pandas as pd

df = pd.read_csv("/work/in/sales.csv", parse_dates=["date"])
totals = df.groupby("region", as_index=False)["amount"].sum().sort_values("amount", ascending=False)
totals.to_csv("/work/out/totals.csv", index=False, float_format="%.2f")
print(totals.to_string(index=False))
