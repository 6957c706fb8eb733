# "Write a short Word report of the month's sales."
import pandas as pd
from docx import Document

df = pd.read_csv("/work/in/sales.csv")
totals = df.groupby("region")["amount"].sum().sort_values(ascending=False)
doc = Document()
doc.add_heading("Sales report", level=1)
doc.add_paragraph(f"{len(df)} orders, {df['amount'].sum():.2f} in total; "
                  f"the best region was {totals.index[0]}.")
table = doc.add_table(rows=1, cols=2)
table.rows[0].cells[0].text = "Region"
table.rows[0].cells[1].text = "Total"
for region, total in totals.items():
    cells = table.add_row().cells
    cells[0].text = region
    cells[1].text = f"{total:.2f}"
doc.save("/work/out/report.docx")
print("report.docx written")
