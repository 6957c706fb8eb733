# "Export the totals per region to Excel with pandas."
import pandas as pd

df = pd.read_csv("/work/in/sales.csv")
totals = df.pivot_table(index="region", values="amount", aggfunc=["sum", "count"])
totals.columns = ["total", "orders"]
with pd.ExcelWriter("/work/out/totals.xlsx", engine="xlsxwriter") as xw:
    totals.to_excel(xw, sheet_name="Totals")
    df.to_excel(xw, sheet_name="Orders", index=False)
print(totals)
