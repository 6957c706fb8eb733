# "Split the sales by region, one CSV each, and zip them."
import zipfile
import pandas as pd

df = pd.read_csv("/work/in/sales.csv")
with zipfile.ZipFile("/work/out/by_region.zip", "w", zipfile.ZIP_DEFLATED) as zf:
    for region, part in df.groupby("region"):
        zf.writestr(f"{region}.csv", part.to_csv(index=False))
print("regions:", df["region"].nunique())
