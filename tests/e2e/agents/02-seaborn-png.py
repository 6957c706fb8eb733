# "Plot the sales per region as a bar chart."
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

df = pd.read_csv("/work/in/sales.csv")
sns.set_theme(style="whitegrid")
fig, ax = plt.subplots(figsize=(6, 4))
sns.barplot(data=df, x="region", y="amount", estimator=sum, errorbar=None, ax=ax)
ax.set_title("Sales by region")
fig.tight_layout()
fig.savefig("/work/out/sales_by_region.png", dpi=100)
print("saved sales_by_region.png")
