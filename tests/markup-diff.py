#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""markup-diff.py - sbx's markup verdicts against reference tokenizers.

Generates hostile HTML, Markdown and SVG from a fixed seed (attributes
straight after quoted values, numeric references without ';', named
references, "<?" and "<!" bogus comments, CDATA, RAWTEXT and RCDATA
elements, namespace prefixes of any length, CSS functions that fetch,
each mutated a byte at a time), has sbx judge them through its validator
entry points (tests/markup-verdict), and reads the same bytes with
independent tokenizers:

  - html5lib, the WHATWG tokenizer and tree builder in Python, for HTML,
    for the raw HTML in Markdown, and for an SVG opened as HTML;
  - libexpat through Python's pyexpat, namespaces on, for an SVG opened
    as XML.

A policy written here, apart from sbx's C, says what in each reference
view is active (an event handler, a script, a fetch, a script URI).  The
test fails when a reference view sees active content in a document that
sbx promoted without the active_content flag (HTML, Markdown) or promoted
at all (SVG, where active content is refused).  Where sbx flags or
refuses and the reference sees nothing, that is counted and shown, not
failed: sbx may be stricter than a browser, never laxer.

Usage: markup-diff.py VERDICT-PROGRAM [ITERATIONS [SEED]].  Prints TAP.
"""
import os
import random
import subprocess
import sys
import tempfile
import xml.parsers.expat

import html5lib

XHTML = "http://www.w3.org/1999/xhtml"
SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"

# --- the reference policy ----------------------------------------------------

# noscript: html5lib, like gumbo, parses as if scripts did not run, and
# reads noscript's content as markup; a browser that runs scripts reads it
# as raw text, so neither reference sees what such a browser sees there.
HTML_ACTIVE_ELEMENTS = {
    "script", "iframe", "frame", "frameset", "object", "embed", "applet",
    "param", "link", "meta", "base", "form", "style", "img", "image",
    "picture", "video", "audio", "source", "track", "bgsound", "input",
    "portal", "keygen", "isindex", "svg", "math", "noscript",
}
FETCHING_ATTRS = {
    "src", "srcset", "imagesrcset", "background", "poster", "data", "action",
    "formaction", "ping", "codebase", "archive", "classid", "lowsrc",
    "dynsrc", "manifest", "longdesc", "profile", "xlink:href",
}
SCRIPT_SCHEMES = ("javascript:", "vbscript:", "data:text/html")
CSS_FETCHING = ("url(", "image-set(", "cross-fade(", "image(", "src(",
                "@import", "@font-face", "expression(", "\\")

SVG_REFUSED = {
    "script", "foreignobject", "handler", "listener", "iframe", "frame",
    "embed", "object", "applet", "link", "meta", "base", "html", "body",
    "form", "input", "button", "textarea", "select", "audio", "video",
    "source", "track",
}
SVG_REFERENCE_ATTRS = {
    "href", "src", "srcset", "action", "formaction", "poster", "background",
    "data", "ping", "codebase", "cite", "longdesc", "usemap", "manifest",
    "lowsrc", "dynsrc",
}


def dense(s):
    return "".join(c for c in s.lower() if ord(c) > 0x20 and ord(c) != 0x7F)


def css_fetches(s):
    d = dense(s)
    return any(p in d for p in CSS_FETCHING)


def html_attr_active(name, value):
    n = name.lower()
    if n.startswith("on") or n in FETCHING_ATTRS:
        return True
    if n == "style" and css_fetches(value):
        return True
    d = dense(value)
    return any(s in d for s in SCRIPT_SCHEMES)


def split_ns(tag):
    if tag.startswith("{"):
        ns, local = tag[1:].split("}", 1)
        return ns, local
    return None, tag


def etree_attrs(e):
    for k, v in e.attrib.items():
        ns, local = split_ns(k)
        if ns == XLINK:
            yield "xlink:" + local, v
        elif ns == XML_NS:
            yield "xml:" + local, v
        else:
            yield local, v


def html5lib_outdated(doc, tree, element):
    """Where html5lib 1.1 follows an older HTML spec than browsers: it
    merges the attributes of a second <body> or <html> start tag into the
    element while a <template> is open; the WHATWG spec (and gumbo, and
    browsers) ignore that tag.  Such a finding is counted apart, not
    failed."""
    low = doc.lower()
    t = low.find("<template")
    return (element in ("body", "html") and t >= 0 and
            max(low.rfind("<body"), low.rfind("<html")) > t and
            any(isinstance(e.tag, str) and split_ns(e.tag)[1] == "template"
                for e in tree.iter()))


OUTDATED = "(html5lib 1.1's older spec) "


def html_view_active(doc):
    """What a browser opening @doc as HTML runs or fetches."""
    tree = html5lib.parse(doc, treebuilder="etree", namespaceHTMLElements=False)
    for e in tree.iter():
        if not isinstance(e.tag, str):
            continue  # comments
        ns, local = split_ns(e.tag)
        if ns is not None and ns != XHTML:
            return "foreign element " + e.tag
        if local.lower() in HTML_ACTIVE_ELEMENTS:
            return "element " + local
        for k, v in etree_attrs(e):
            if html_attr_active(k, v):
                return ((OUTDATED if html5lib_outdated(doc, tree, local) else "") +
                        "attribute %s=%r on %s" % (k, v, local))
    return None


def svg_href_ok(v):
    v = v.lstrip(" \t\r\n").lower()
    return (v.startswith("#") and len(v) > 1) or v.startswith(
        ("data:image/png;", "data:image/png,", "data:image/jpeg;", "data:image/jpeg,"))


def svg_css_active(v):
    """CSS or a value in an SVG: url() other than url(#...), the rest of
    the fetching functions and at-rules, escapes, script URIs."""
    d = dense(v)
    i = d.find("url(")
    while i >= 0:
        rest = d[i + 4:].lstrip("'\"")
        if not rest.startswith("#"):
            return True
        i = d.find("url(", i + 4)
    if any(p in d for p in CSS_FETCHING if p != "url("):
        return True
    return any(s in d for s in ("javascript:", "vbscript:"))


def svg_attr_active(local, ns, value, resolve):
    ln = local.lower()
    if ln.startswith("on") or (ns == XML_NS and ln == "base"):
        return True
    if ln in SVG_REFERENCE_ATTRS and not svg_href_ok(value):
        return True
    if ln == "attributename":
        v = value.strip(" \t\r\n")
        target = resolve(v)
        t = target.lower()
        if t.startswith("on") or t in SVG_REFERENCE_ATTRS or t == "base":
            return True
    return svg_css_active(value)


def svg_html_view_active(doc):
    """An SVG opened as HTML (sniffed, inlined, renamed)."""
    tree = html5lib.parse(doc, treebuilder="etree", namespaceHTMLElements=False)
    for e in tree.iter():
        if not isinstance(e.tag, str):
            continue
        _, local = split_ns(e.tag)
        if local.lower() in SVG_REFUSED - {"html", "body"}:
            return "element " + local
        if local.lower() == "style" and svg_css_active("".join(e.itertext())):
            return "style text"
        for k, v in e.attrib.items():
            ns, name = split_ns(k)
            local_name = name.rsplit(":", 1)[-1]
            if svg_attr_active(local_name, ns, v, lambda s: s.rsplit(":", 1)[-1]):
                return "attribute %s=%r" % (k, v)
    return None


def svg_xml_view_active(doc):
    """An SVG opened as XML, by libexpat with namespaces on; None when
    expat refuses the document (then no browser draws it either)."""
    p = xml.parsers.expat.ParserCreate(namespace_separator="\x01")
    scopes = {}
    found = []
    style = []

    def resolve(qname):
        # The prefix's binding does not matter to the policy (any
        # namespace's href is refused), only the local name.
        return qname.split(":", 1)[1] if ":" in qname else qname

    def start_ns(prefix, uri):
        scopes.setdefault(prefix, []).append(uri)

    def end_ns(prefix):
        scopes[prefix].pop()

    def start(name, attrs):
        ns, _, local = name.rpartition("\x01")
        if local.lower() in SVG_REFUSED:
            found.append("element " + local)
        style.append(local.lower() == "style")
        for k, v in attrs.items():
            ans, _, alocal = k.rpartition("\x01")
            if svg_attr_active(alocal, ans or None, v, resolve):
                found.append("attribute %s=%r" % (k, v))

    def end(name):
        style.pop()

    def text(data):
        if style and style[-1]:
            text.css += data

    text.css = ""

    def doctype(name, sysid, pubid, internal):
        if internal:
            found.append("DOCTYPE with an internal subset")

    def entity(*a):
        found.append("entity declaration")

    def pi(target, data):
        found.append("processing instruction " + target)

    p.StartNamespaceDeclHandler = start_ns
    p.EndNamespaceDeclHandler = end_ns
    p.StartElementHandler = start
    p.EndElementHandler = end
    p.CharacterDataHandler = text
    p.StartDoctypeDeclHandler = doctype
    p.EntityDeclHandler = entity
    p.ProcessingInstructionHandler = pi
    try:
        p.Parse(doc.encode("utf-8"), True)
    except (xml.parsers.expat.ExpatError, LookupError, ValueError):
        return None  # not well-formed, or an encoding expat does not know
    if svg_css_active(text.css):
        found.append("style text")
    return found[0] if found else ""


# --- the generators ----------------------------------------------------------

SCHEME_VALUES = [
    "javascript:alert(1)", "&#106avascript&colon;alert(1)", "&#x6A;avascript:x",
    "java&Tab;script:x", "jav&#x09;ascript:x", "&#0000106;avascript:x",
    "javascrip&#x74:x", "JaVaScRiPt:x", "vbscript:x", "data:text/html,x",
    "java&NewLine;script:x", "javascript&#58x",
]
PLAIN_VALUES = [
    "x", "#a", "https://e.example/x", "data:image/png;base64,AA", "a>b",
    "&quot;", "1 2 3", "", "a&amp;b", "&lt;img src=x onerror=1&gt;",
]
CSS_VALUES = [
    "background:image-set(\"https://e/x\" 1x)", "background:-webkit-image-set('x' 1x)",
    "background:cross-fade('x', red 50%)", "background:image('x')", "fill:url(#a)",
    "fill:url( 'x.svg#a')", "background:u\\72l(x)", "color:red", "width:expression(1)",
    "@font-face{src:url(x)}", "@import 'x.css'", "background:src('x')",
    "fill:&#117;rl(x)",
]
HTML_TAGS = [
    "a", "img", "div", "details", "p", "body", "table", "td", "svg", "math", "style",
    "script", "textarea", "title", "xmp", "noscript", "iframe", "template", "select",
    "option", "b", "span", "input", "form", "object", "video", "DIV", "Details",
    "plaintext", "noembed", "button", "image",
]
HTML_ATTRS = [
    "title", "href", "src", "onclick", "ONERROR", "ontoggle", "style", "background",
    "class", "id", "data-x", "srcset", "open", "xlink:href", "action", "poster", "on",
    "oNmOuSeOvEr", "formaction", "alt",
]
SEPARATORS = [" ", "", "/", "\t", "\n", "  ", " / ", "\r\n"]
TEXTS = [
    "x", "<!-- c -->", "<!-->", "<!--->", "<?xml x > <img src=x onerror=alert(1)> ?>",
    "<![CDATA[ <img src=x onerror=1> ]]>", "&lt;script&gt;", "</p>", "<!DOCTYPE html>",
    "</textarea>", "</style>", "</title>", "<b", ">", "<", "&", "<!x onclick=1>",
    "<? <b onclick=1> ?>", "<!-- --!> <b onclick=1> -->", "</x onclick=1>",
    "<img/src=x/onerror=1>", "<a/href=javascript:x>x</a>", "--!>", "]]>",
]
MUTATION_BYTES = "<>\"'=/ &;:#\t\n?!-x"


def value(r):
    k = r.random()
    if k < 0.3:
        return r.choice(SCHEME_VALUES)
    if k < 0.55:
        return r.choice(CSS_VALUES)
    return r.choice(PLAIN_VALUES)


def quoted(r, v):
    q = r.choice(['"', '"', "'", ""])
    if q == "" and any(c in v for c in " \t\n>\"'=<`"):
        q = '"'
    return q + v.replace(q, "&quot;" if q == '"' else "&#39;") + q if q else v


def html_tag(r):
    name = r.choice(HTML_TAGS)
    out = "<" + name
    for _ in range(r.randrange(0, 4)):
        out += r.choice(SEPARATORS) + r.choice(HTML_ATTRS)
        if r.random() < 0.85:
            out += "=" + quoted(r, value(r))
    return out + r.choice([">", ">", "/>", " >", ""])


def mutate(r, s):
    for _ in range(r.randrange(0, 3)):
        if not s:
            break
        i = r.randrange(len(s))
        op = r.randrange(4)
        if op == 0:
            s = s[:i] + s[i + 1:]
        elif op == 1:
            s = s[:i] + r.choice(MUTATION_BYTES) + s[i:]
        elif op == 2:
            s = s[:i] + s[i].swapcase() + s[i + 1:]
        else:
            s = s[:i] + s[i:i + 8] + s[i:]
    return s


def html_doc(r):
    parts = []
    for _ in range(r.randrange(1, 7)):
        k = r.random()
        if k < 0.55:
            parts.append(html_tag(r))
        elif k < 0.75:
            parts.append(r.choice(TEXTS))
        else:
            parts.append("</" + r.choice(HTML_TAGS) + ">")
    return mutate(r, "".join(parts))


SVG_ELEMENTS = ["g", "a", "use", "image", "set", "animate", "rect", "text", "style", "desc",
                "title", "script", "foreignObject", "p", "img", "b", "Script", "svg:g"]
SVG_ATTRS = ["x", "fill", "style", "href", "xlink:href", "P:href", "attributeName", "to",
             "values", "onload", "ONCLICK", "id", "transform", "Q:href", "xml:base",
             "P:onclick"]
ATTRNAME_VALUES = ["P:href", " href", "HREF", "xlink:href", "Q:href", "fill", "onclick",
                   "P:src", "x", "P:hreff", "Q:onclick"]
PROLOGUES = [
    "", '<?xml version="1.0"?>\n', '<?xml version="1.0" encoding="UTF-8"?>',
    '<?xml version="1.0" > <img src=x onerror=alert(1)> ?>',
    '<?xml version="1.0" <b onclick=1> ?>',
    '<!DOCTYPE svg [<!ENTITY a "b">]>', '<!-- c -->', '<!--> <img src=x onerror=1> -->',
    '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
    '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n',
    '<?xml-stylesheet href="x.css"?>',
]
SVG_TEXTS = [
    "x", "<!-- c -->", "<![CDATA[ a > b ]]>", "<![CDATA[ <img src=x onerror=1> ]]>",
    "&lt;b onclick=1&gt;", "&amp;", "&#106;", "<!-->", "<?php x ?>", "</style>",
    "<![CDATA[>]]>", "]]>", "--!>", "<desc><style>x</style></desc>",
]


def svg_value(r, attr, prefix):
    if attr == "attributeName":
        v = r.choice(ATTRNAME_VALUES)
    else:
        k = r.random()
        v = (r.choice(SCHEME_VALUES) if k < 0.2 else r.choice(CSS_VALUES) if k < 0.5
             else r.choice(["#a", "1 2", "red", "url(#a)", "data:image/png;base64,AA",
                            "https://e/x", "a>b", "", "#"]))
    v = v.replace("P:", prefix + ":")
    return '"' + v.replace('"', "&quot;").replace("<", "&lt;") + '"'


def svg_doc(r):
    prefix = r.choice(["p", "xl", "a" * r.randrange(1, 64), "P"])
    body = []
    for _ in range(r.randrange(1, 5)):
        k = r.random()
        if k < 0.6:
            name = r.choice(SVG_ELEMENTS)
            attrs = r.sample(SVG_ATTRS, r.randrange(0, 3))
            a = "".join(" %s=%s" % (x.replace("P:", prefix + ":"), svg_value(r, x, prefix))
                        for x in attrs)
            body.append("<%s%s>%s</%s>" % (name, a, r.choice(["", "x", "&#x61;"] + SVG_TEXTS),
                                           name) if r.random() < 0.6 else
                        "<%s%s/>" % (name, a))
        else:
            body.append(r.choice(SVG_TEXTS))
    head = ('<svg xmlns="%s" xmlns:xlink="%s" xmlns:%s="%s" xmlns:Q="urn:x">'
            % (SVG, XLINK, prefix, r.choice([XLINK, XLINK, "urn:other"])))
    doc = r.choice(PROLOGUES) + head + "".join(body) + "</svg>\n"
    return mutate(r, doc) if r.random() < 0.5 else doc


# The findings of issue 23, first in every run.
FIXED = {
    "text/html": [
        '<details title="a"ontoggle=alert(1) open>x</details>',
        '<a href="&#106avascript&colon;alert(1)">x</a>',
        '<p style="background:image-set(&quot;https://e/x&quot; 1x)">x</p>',
        '<body background="https://e/x.png">',
        # gumbo 0.10.1 with a cap on recorded errors read this as "aonclick"
        '<p a a onclick=alert(1)>x</p>',
        '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
        # dropped by html5lib and gumbo (the HTML of 2016), kept by browsers
        # since 2025: checked here by sbx, not by the reference
        '<select><img src=x onerror=alert(1)></select>',
    ],
    "image/svg+xml": [
        '<?xml version="1.0" > <img src=x onerror=alert(document.domain)> ?>'
        '<svg xmlns="%s"/>' % SVG,
        '<svg xmlns="%s" xmlns:%s="%s"><a><set attributeName="%s:href" to="https://e/"/>'
        '</a></svg>' % (SVG, "a" * 40, XLINK, "a" * 40),
        '<svg xmlns="%s"><g style="background:image-set(&quot;https://e/x&quot; 1x)"/></svg>'
        % SVG,
    ],
}


# --- the comparison -------------------------------------------------------------

def verdicts(prog, mtype, docs, tmp):
    paths = []
    for i, d in enumerate(docs):
        path = os.path.join(tmp, "%s-%05d" % (mtype.replace("/", "_"), i))
        with open(path, "wb") as f:
            f.write(d.encode("utf-8"))
        paths.append(path)
    out = []
    for k in range(0, len(paths), 500):
        res = subprocess.run([prog, mtype] + paths[k:k + 500], capture_output=True, text=True,
                             check=True)
        out += [line.split("\t") for line in res.stdout.splitlines()]
    assert len(out) == len(docs), "markup-verdict printed %d lines for %d files" % (
        len(out), len(docs))
    return [(v, extra) for v, _, extra in out]


def main():
    prog = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 23
    r = random.Random(seed)
    docs = {
        "text/html": FIXED["text/html"] + [html_doc(r) for _ in range(n)],
        "text/markdown": ["# T\n\n" + d for d in FIXED["text/html"]] +
                         ["# T\n\n" + html_doc(r) for _ in range(n)],
        "image/svg+xml": FIXED["image/svg+xml"] + [svg_doc(r) for _ in range(n)],
    }
    print("1..3")
    t = 0
    with tempfile.TemporaryDirectory(prefix="sbx-markup-diff.") as tmp:
        for mtype in ("text/html", "text/markdown", "image/svg+xml"):
            t += 1
            got = verdicts(prog, mtype, docs[mtype], tmp)
            missed, stricter, active, accepted, xml_parsed, outdated = [], 0, 0, 0, 0, 0
            for d, (verdict, extra) in zip(docs[mtype], got):
                if mtype == "image/svg+xml":
                    xv = svg_xml_view_active(d)
                    xml_parsed += xv is not None
                    why = svg_html_view_active(d) or xv
                    caught = verdict == "rejected"
                else:
                    why = html_view_active(d)
                    caught = verdict == "rejected" or extra == "active_content"
                accepted += verdict == "promoted" and not caught
                active += bool(why)
                if why and not caught and why.startswith(OUTDATED):
                    outdated += 1
                elif why and not caught:
                    missed.append((d, why, verdict, extra))
                elif caught and not why:
                    stricter += 1
            desc = ("%s: %d documents (seed %d), %d active in the reference view, "
                    "%d promoted unflagged, %d flagged or refused where the reference "
                    "sees nothing, %d where html5lib follows an older spec%s" %
                    (mtype, len(docs[mtype]), seed, active, accepted, stricter, outdated,
                     ", %d well-formed XML" % xml_parsed if mtype == "image/svg+xml" else ""))
            if missed:
                print("not ok %d - %s: %d promoted that the reference finds active" %
                      (t, desc, len(missed)))
                for d, why, verdict, extra in missed[:10]:
                    print("# %r: reference sees %s; sbx: %s %s" % (d, why, verdict, extra))
            else:
                print("ok %d - %s" % (t, desc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
