# Read the month's sales, write totals per region and a bar chart.
import csv
import matplotlib.pyplot as plt

totals = {}
with open("/work/in/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])

with open("/work/out/totals.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "total"])
    for region, total in sorted(totals.items()):
        w.writerow([region, f"{total:.2f}"])

fig, ax = plt.subplots(figsize=(6, 4))
regions = sorted(totals)
ax.bar(regions, [totals[r] for r in regions], color="#4477aa")
ax.set_title("Sales by region, 2026-10")
ax.set_ylabel("amount")
fig.tight_layout()
fig.savefig("/work/out/chart.png", dpi=100)
print("regions:", len(totals))
