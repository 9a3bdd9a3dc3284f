#!/usr/bin/env python3
"""Structure check of `compare --html FILE` (Python standard library only; .ci/run runs it).

Fails (exit 1, one line per problem) unless the page:
  * parses as HTML with every non-void element closed in order, and every <svg> parses as XML;
  * is self-contained: no <script>, <link>, <img>, <iframe>, no src= or href= attribute, no url(...)
    and no http(s):// other than the SVG namespace;
  * has, per transport heading (<h2>), two bar charts (rate, CPU) with two bars (ours, raw) per case
    that has figures, each bar's label a number, and a table row per case;
  * has latency plots whose two curves (ours, raw) are cumulative: x and latency never decrease.
Prints what the page plots.
"""
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
SVG_VOID_OK = True  # self-closing SVG children (<rect/>) are checked by the XML parse


class Structure(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.problems, self.tags = [], [], []
        self.in_svg = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "svg":
            self.in_svg += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append("unbalanced </%s> (open: %s)" % (tag, self.stack[-3:]))
            return
        self.stack.pop()
        if tag == "svg":
            self.in_svg -= 1


def main(path):
    text = open(path, encoding="utf-8").read()
    problems = []
    p = Structure()
    p.feed(text)
    p.close()
    problems += p.problems
    if p.stack:
        problems.append("unclosed elements: %s" % p.stack)
    for tag, attrs in p.tags:
        if tag in ("script", "link", "img", "iframe", "object", "embed"):
            problems.append("not self-contained: <%s>" % tag)
        for a in ("src", "href"):
            if a in attrs:
                problems.append("not self-contained: <%s %s=...>" % (tag, a))
    if "url(" in text:
        problems.append("not self-contained: url(...) in CSS")
    for u in re.findall(r"https?://[^\"'\s<>]+", text):
        if u != "http://www.w3.org/2000/svg":
            problems.append("not self-contained: %s" % u)

    ns = "{http://www.w3.org/2000/svg}"
    sections = re.split(r"<h2>", text)[1:]
    if not sections:
        problems.append("no transport section (<h2>)")
    summary = []
    for sec in sections:
        transport = sec.split("</h2>", 1)[0]
        svgs = re.findall(r"<svg.*?</svg>", sec, re.S)
        trees = []
        for s in svgs:
            try:
                trees.append(ET.fromstring(s))
            except ET.ParseError as e:
                problems.append("%s: an <svg> is not well-formed XML: %s" % (transport, e))
        rows = len(re.findall(r"<tr><td>", sec))
        if len(trees) < 2:
            problems.append("%s: fewer than two bar charts" % transport)
            continue
        for name, chart in zip(("rate", "cpu"), trees[:2]):
            rects = chart.findall(ns + "rect")
            labels = [t.text for t in chart.findall(ns + "text")]
            failed = sum(1 for t in labels if t in ("FAILED", "no figure"))
            if len(rects) != 2 * (rows - failed):
                problems.append("%s %s chart: %d bars for %d cases with figures" % (
                    transport, name, len(rects), rows - failed))
            for r in rects:
                if float(r.get("width")) <= 0:
                    problems.append("%s %s chart: a bar of width %s" % (transport, name, r.get("width")))
            colours = [r.get("fill") for r in rects]
            if colours[0::2] != ["#1f77b4"] * (len(rects) // 2) or colours[1::2] != ["#ff7f0e"] * (len(rects) // 2):
                problems.append("%s %s chart: bars not in ours/raw pairs" % (transport, name))
            values = [t for t in labels if re.match(r"^[0-9.]+ ", t or "")]
            if len(values) != len(rects):
                problems.append("%s %s chart: %d value labels for %d bars" % (transport, name, len(values), len(rects)))
        plots = trees[2:]
        curves = 0
        for plot in plots:
            lines = plot.findall(ns + "polyline")
            if not 1 <= len(lines) <= 2:
                problems.append("%s: a latency plot with %d curves" % (transport, len(lines)))
            for line in lines:
                pts = [tuple(map(float, xy.split(","))) for xy in line.get("points").split()]
                curves += 1
                for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
                    # SVG y grows downwards: a latency that never decreases has y never increasing
                    if x1 < x0 or y1 > y0 + 1e-9:
                        problems.append("%s: a latency curve that is not cumulative at %s -> %s" % (
                            transport, (x0, y0), (x1, y1)))
                        break
        summary.append("%s: %d cases, rate and CPU bar charts, %d latency plots (%d curves)" % (
            transport, rows, len(plots), curves))
    for line in summary:
        print("check-html-report: " + line)
    print("check-html-report: %s, %d octets, self-contained" % (path, len(text.encode("utf-8"))))
    for pr in problems:
        print("check-html-report: FAIL " + pr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
