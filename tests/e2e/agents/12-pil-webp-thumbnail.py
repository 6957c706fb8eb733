# "Make a small preview image of the chart for the chat."
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from PIL import Image

df = pd.read_csv("/work/in/sales.csv")
fig, ax = plt.subplots(figsize=(6, 4))
df.groupby("region")["amount"].sum().plot.bar(ax=ax)
fig.savefig("/tmp/chart.png", dpi=100)
with Image.open("/tmp/chart.png") as im:
    im = im.convert("RGB")
    im.thumbnail((160, 160))
    im.save("/work/out/preview.webp", "WEBP", quality=80)
    print("preview", im.size)
