# "Give me the totals as an HTML table, and as a page I can open."
import pandas as pd

df = pd.read_csv("/work/in/sales.csv")
totals = df.groupby("region")["amount"].agg(["sum", "mean", "count"]).round(2)
totals.to_html("/work/out/totals.html")
with open("/work/out/report.html", "w") as f:
    f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Sales</title>"
            "<style>table.totals td { text-align: right; }</style></head>\n"
            "<body>\n<h1>Sales by region</h1>\n")
    f.write(totals.to_html(border=0, classes="totals"))
    f.write("\n</body></html>\n")
print("totals.html and report.html written")
