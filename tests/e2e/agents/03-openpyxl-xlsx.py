# "Put the sales in a spreadsheet with a total row."
import csv
from openpyxl import Workbook
from openpyxl.styles import Font

wb = Workbook()
ws = wb.active
ws.title = "Sales"
with open("/work/in/sales.csv", newline="") as f:
    rows = list(csv.reader(f))
ws.append(rows[0])
for c in ws[1]:
    c.font = Font(bold=True)
for date, region, amount in rows[1:]:
    ws.append([date, region, float(amount)])
n = ws.max_row
ws.append(["total", None, f"=SUM(C2:C{n})"])
ws.column_dimensions["A"].width = 12
wb.save("/work/out/sales.xlsx")
print("rows:", n - 1)
