# "Summarise the sales in Markdown."
import pandas as pd

df = pd.read_csv("/work/in/sales.csv")
totals = df.groupby("region")["amount"].sum().sort_values(ascending=False)
lines = ["# Sales summary", "",
         f"- orders: {len(df)}",
         f"- total: {df['amount'].sum():.2f}",
         f"- period: {df['date'].min()} to {df['date'].max()}", "",
         "| region | total |", "|---|---:|"]
lines += [f"| {r} | {t:.2f} |" for r, t in totals.items()]
with open("/work/out/summary.md", "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
