# "Return the statistics as JSON."
import json
import pandas as pd

df = pd.read_csv("/work/in/sales.csv")
stats = {
    "orders": int(len(df)),
    "total": round(float(df["amount"].sum()), 2),
    "by_region": {r: round(float(t), 2) for r, t in df.groupby("region")["amount"].sum().items()},
    "largest": df.loc[df["amount"].idxmax()].to_dict(),
}
with open("/work/out/stats.json", "w") as f:
    json.dump(stats, f, indent=2)
print(json.dumps(stats))
