#!/usr/bin/env python3
"""Renders `traffic` HTML reports of the sample captures and checks them in a real headless browser.

Debian's chromium, driven by Playwright (from PyPI) with executable_path: no `playwright install`, no download.
For every sample: no console errors, no network requests (the page is opened from file://, and every request
other than the page itself fails the check), the endpoint table equals the JSON report's groups, sorting and
filtering change the rows as expected, the treemap's rectangles have areas proportional to their bytes (within
a pixel of each side), hover and zoom work, print hides the controls, and a screenshot is not blank. Then a
check page (a failing `traffic check`) and a diff page.

Usage: html-report-check.py --traffic .build/debug/traffic --out DIR [--screenshot docs/x.png] [SAMPLE...]
Exit status: 0 all passed, 1 a check failed, 2 the browser or Playwright is missing (the Swift test skips then).
"""
import argparse
import glob
import json
import os
import struct
import subprocess
import sys
import time
import zlib

CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"]


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def run(cmd, ok=(0,)):
    result = subprocess.run(cmd, capture_output=True)
    if result.returncode not in ok:
        raise CheckFailed(f"{' '.join(cmd)} exited {result.returncode}: {result.stderr.decode(errors='replace')}")
    return result.stdout


# --- PNG decoding (stdlib only), to tell a blank screenshot from a drawn one ---------------------------------

def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit truecolour PNG, as Chromium writes them."""
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            expect(depth == 8 and colour in (2, 6), f"unexpected PNG format depth={depth} colour={colour}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prev[i]
            upleft = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - upleft
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upleft)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else upleft)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def check_not_blank(png, label):
    width, height, channels, rows = png_pixels(png)
    colours, drawn, total = set(), 0, 0
    for row in rows[::4]:
        for x in range(0, width * channels, channels * 4):
            pixel = row[x:x + 3]
            colours.add(pixel)
            total += 1
            if pixel != b"\xff\xff\xff":
                drawn += 1
    expect(len(colours) >= 8, f"{label}: screenshot has only {len(colours)} colours (blank?)")
    expect(drawn / total >= 0.02, f"{label}: only {100 * drawn / total:.1f}% of the screenshot is not white")
    return len(colours), drawn / total


# --- the browser -----------------------------------------------------------------------------------------------

def open_page(browser, path):
    """A fresh page on `path`, recording console errors, page errors and any request but the page itself."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    problems, requests = [], []
    page_url = "file://" + os.path.abspath(path)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def route(r):
        requests.append(r.request.url)
        if r.request.url == page_url:
            r.continue_()
        else:
            r.abort()

    context.route("**/*", route)
    started = time.monotonic()
    page.goto(page_url, wait_until="load")
    elapsed = time.monotonic() - started
    return context, page, problems, requests, page_url, elapsed


def finish_page(context, page, problems, requests, page_url, label):
    page.wait_for_timeout(50)
    others = [u for u in requests if u != page_url]
    expect(not others, f"{label}: the page made network requests: {others}")
    expect(not problems, f"{label}: {problems}")
    context.close()


def table_rows(page):
    return page.evaluate("""() => Array.from(document.querySelectorAll('#endpoints tbody tr')).map(r => ({
        other: r.classList.contains('other'), hidden: r.hidden,
        keys: Array.from(r.querySelectorAll('td.key')).map(c => c.textContent),
        values: Array.from(r.querySelectorAll('td[data-v]')).map(c => Number(c.getAttribute('data-v')))}))""")


def column_index(page, title):
    """The position of a numeric column among the row's `data-v` cells."""
    titles = page.evaluate("""() => Array.from(document.querySelectorAll('#endpoints thead th.num'))
        .map(th => th.getAttribute('data-col'))""")
    return titles.index(title)


def check_table(page, report, label, top=500):
    rows = table_rows(page)
    groups = report["groups"]
    group_by = [k for k in ("capture", "host", "path", "method", "status", "content_type", "connection")
                if groups and k in groups[0]]
    shown = [r for r in rows if not r["other"]]
    expect(len(shown) == min(top, len(groups)), f"{label}: {len(shown)} rows for {len(groups)} groups")
    columns = {name: column_index(page, name) for name in
               ("requests", "responses", "request bytes", "response bytes", "body on wire", "body decoded", "saved", "total")}
    for row, group in zip(shown, groups):
        keys = [str(group[k]) for k in group_by]
        expect(row["keys"] == keys, f"{label}: row keys {row['keys']} != JSON {keys}")
        v = row["values"]
        expected = {
            "requests": group["requests"], "responses": group["responses"],
            "request bytes": group["request_bytes"], "response bytes": group["response_bytes"],
            "body on wire": group["request_body_bytes"] + group["response_body_bytes"],
            "body decoded": group["request_decoded_body_bytes"] + group["response_decoded_body_bytes"],
            "saved": group["compression_saving_bytes"], "total": group["total_bytes"],
        }
        for name, value in expected.items():
            expect(v[columns[name]] == value, f"{label}: {keys} {name} = {v[columns[name]]}, JSON says {value}")
    other = [r for r in rows if r["other"]]
    if len(groups) > top:
        expect(len(other) == 1, f"{label}: no 'other' row for {len(groups)} groups")
        for name, field in (("total", "total_bytes"), ("requests", "requests"), ("response bytes", "response_bytes")):
            rest = sum(g[field] for g in groups[top:])
            expect(other[0]["values"][columns[name]] == rest, f"{label}: other row {name} != sum of the rest ({rest})")
    else:
        expect(not other, f"{label}: an 'other' row though every group is shown")
    return columns


def check_sorting(page, columns, label):
    before = sorted(tuple(r["keys"]) for r in table_rows(page) if not r["other"])
    button = page.locator("#endpoints thead th[data-col='requests'] button")
    button.click()
    rows = [r for r in table_rows(page) if not r["other"]]
    values = [r["values"][columns["requests"]] for r in rows]
    expect(values == sorted(values, reverse=True), f"{label}: requests not descending after a click: {values}")
    button.click()
    rows = [r for r in table_rows(page) if not r["other"]]
    values = [r["values"][columns["requests"]] for r in rows]
    expect(values == sorted(values), f"{label}: requests not ascending after a second click: {values}")
    expect(sorted(tuple(r["keys"]) for r in rows) == before, f"{label}: sorting changed the set of rows")
    page.locator("#endpoints thead th[data-col='response bytes'] button").click()
    values = [r["values"][columns["response bytes"]] for r in table_rows(page) if not r["other"]]
    expect(values == sorted(values, reverse=True), f"{label}: response bytes not descending: {values}")
    expect(table_rows(page)[-1]["other"] or not any(r["other"] for r in table_rows(page)),
           f"{label}: the 'other' row did not stay last")


def check_filter(page, report, label, top=500):
    groups = report["groups"]
    keyed = [" ".join(str(v) for k, v in g.items() if k in ("capture", "host", "path", "method", "status",
                                                             "content_type", "connection")).lower() for g in groups[:top]]
    # A query that keeps some rows and drops others when the keys allow it: the last row's last key.
    candidates = [str(list(g.values())[1]).lower() for g in groups[:top]] if groups else []
    query = None
    for c in reversed(candidates):
        n = sum(c in k for k in keyed)
        if 0 < n < len(keyed):
            query = c
            break
    for q in ([query] if query else []) + ["zz-no-such-endpoint"]:
        page.fill("#filter", q)
        visible = [r for r in table_rows(page) if not r["hidden"] and not r["other"]]
        expected = sum(q in k for k in keyed)
        expect(len(visible) == expected, f"{label}: filter {q!r} shows {len(visible)} rows, expected {expected}")
        expect(all(q in " ".join(r["keys"]).lower() for r in visible), f"{label}: filter {q!r} shows a non-matching row")
        shown = page.text_content("#shown")
        expect(shown == str(expected), f"{label}: the count says {shown}, expected {expected}")
    page.fill("#filter", "")
    expect(sum(not r["hidden"] for r in table_rows(page)) == len(table_rows(page)), f"{label}: clearing the filter")


def check_treemap(page, report, label, top=500):
    if page.locator("#treemap").count() == 0:
        expect(all(g["total_bytes"] == 0 for g in report["groups"]), f"{label}: no treemap though there are bytes")
        return 0
    data = page.evaluate("""() => {
        // The drawing area is the content box: the border is outside the viewBox.
        const svg = document.getElementById('treemap'), box = svg.getBoundingClientRect(), st = getComputedStyle(svg);
        const bx = parseFloat(st.borderLeftWidth) + parseFloat(st.borderRightWidth);
        const by = parseFloat(st.borderTopWidth) + parseFloat(st.borderBottomWidth);
        return {total: Number(svg.getAttribute('data-total')), width: box.width - bx, height: box.height - by,
          leaves: Array.from(document.querySelectorAll('#tm-all rect.tm-leaf')).map(r => {
            const b = r.getBoundingClientRect();
            return {bytes: Number(r.getAttribute('data-bytes')), w: b.width, h: b.height, tip: r.getAttribute('data-tip')};
          })};
    }""")
    leaves = data["leaves"]
    groups = report["groups"]
    drawn = sorted(l["bytes"] for l in leaves)
    expected_bytes = [g["total_bytes"] for g in groups[:top] if g["total_bytes"] > 0]
    if len(groups) > top:
        expected_bytes.append(sum(g["total_bytes"] for g in groups[top:]))
    expect(drawn == sorted(b for b in expected_bytes if b > 0), f"{label}: treemap leaves {drawn} != groups' bytes")
    expect(data["total"] == sum(drawn), f"{label}: treemap total {data['total']} != sum of leaves {sum(drawn)}")
    px_per_byte = data["width"] * data["height"] / data["total"]
    worst = 0.0
    for leaf in leaves:
        want = leaf["bytes"] * px_per_byte
        got = leaf["w"] * leaf["h"]
        # Within a pixel: the area may be off by at most one pixel along each side.
        tolerance = leaf["w"] + leaf["h"] + 1
        worst = max(worst, abs(got - want))
        expect(abs(got - want) <= tolerance,
               f"{label}: leaf of {leaf['bytes']} bytes has {got:.1f} px², expected {want:.1f} (±{tolerance:.1f})")
    # Hover shows the leaf's numbers; a click zooms into its host, whose leaves then fill the map.
    first = page.locator("#tm-all rect.tm-leaf").first
    first.hover()
    expect(page.text_content("#tm-details") == leaves[0]["tip"], f"{label}: hover did not show the leaf's details")
    zoom = first.get_attribute("data-zoom")
    first.click()
    expect(page.locator("#tm-all").is_hidden() and page.locator("#" + zoom).is_visible(), f"{label}: click did not zoom")
    zoomed = page.evaluate(f"""() => Array.from(document.querySelectorAll('#{zoom} rect.tm-leaf')).map(r => {{
        const b = r.getBoundingClientRect(); return b.width * b.height; }})""")
    expect(abs(sum(zoomed) - data["width"] * data["height"]) <= data["width"] + data["height"],
           f"{label}: the zoomed host does not fill the map")
    page.click("#tm-back")
    expect(page.locator("#tm-all").is_visible() and page.locator("#" + zoom).is_hidden(), f"{label}: back did not return")
    return worst


def check_print(page, label):
    page.emulate_media(media="print")
    expect(page.locator("#filter").is_hidden(), f"{label}: the filter box would print")
    page.emulate_media(media="screen")
    pdf = page.pdf(format="A4")
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    expect(pdf.startswith(b"%PDF") and pages >= 1, f"{label}: printing to PDF gave {len(pdf)} bytes, {pages} pages")


def check_timeline(page, report, label, limit):
    messages = report["summary"]["requests"] + report["summary"]["responses"]
    if page.locator("#waterfall").count():
        expect(limit is None or messages <= limit, f"{label}: a waterfall for {messages} messages over the limit {limit}")
        # Each exchange is a group of bars with its numbers in a title; there are no more than messages.
        exchanges = page.locator("#waterfall g.wf-exchange").count()
        summary = report["summary"]
        expect(0 < exchanges <= max(1, messages + 2 * summary["tls_connections"] + 2 * summary.get("quic_connections", 0)),
               f"{label}: {exchanges} waterfall exchanges for {messages} messages")
    elif page.locator("#bytes-over-time").count():
        expect(limit is not None and messages > limit, f"{label}: bytes over time though the waterfall would fit")
        legend = page.evaluate("""() => Array.from(document.querySelectorAll('#h-timeline ~ ul.legend span[title]'))
            .map(s => parseInt(s.getAttribute('title')))""")
        total = sum(g["total_bytes"] for g in report["groups"])
        expect(sum(legend) == total, f"{label}: bytes over time add up to {sum(legend)}, the groups to {total}")
    else:
        expect(messages == 0 and report["summary"]["tls_connections"] == 0, f"{label}: no timeline")


def check_report(browser, traffic, sample, out, screenshot=None, top=None, timeline=None):
    label = os.path.basename(sample) + (f" --top {top} --timeline-messages {timeline}" if top else "")
    html_path = os.path.join(out, os.path.basename(sample) + (f"-top{top}" if top else "") + ".html")
    report = json.loads(run([traffic, "analyze", sample, "--format", "json"]))
    extra = ["--top", str(top), "--timeline-messages", str(timeline)] if top else []
    run([traffic, "analyze", sample, "--format", "html", "-o", html_path] + extra)
    top = top or 500
    context, page, problems, requests, url, elapsed = open_page(browser, html_path)
    if screenshot:
        # For the README: the page as it opens, down to the first rows of the table.
        page.screenshot(path=screenshot, clip={"x": 0, "y": 0, "width": 1300, "height": 1500}, full_page=True)
    columns = check_table(page, report, label, top)
    worst = check_treemap(page, report, label, top)
    check_timeline(page, report, label, timeline if timeline is not None else 3000)
    png = page.screenshot(full_page=True)
    colours, drawn = check_not_blank(png, label)
    if report["groups"]:
        check_sorting(page, columns, label)
        check_filter(page, report, label, top)
    check_print(page, label)
    finish_page(context, page, problems, requests, url, label)
    size = os.path.getsize(html_path)
    print(f"ok  {label}: {len(report['groups'])} groups, page {size} bytes, load {elapsed * 1000:.0f} ms, "
          f"treemap worst area error {worst:.2f} px², screenshot {colours} colours {drawn * 100:.0f}% drawn")


def check_check_page(browser, traffic, samples_dir, out):
    base = os.path.join(out, "baseline.json")
    run([traffic, "baseline", os.path.join(samples_dir, "check-base.pcap"), "-o", base])
    larger = os.path.join(samples_dir, "check-larger.pcap")
    verdict = json.loads(run([traffic, "check", larger, "--baseline", base, "--max-increase", "10%", "--fail-on-new",
                              "--format", "json"], ok=(1,)))
    page_path = os.path.join(out, "check.html")
    run([traffic, "check", larger, "--baseline", base, "--max-increase", "10%", "--fail-on-new",
         "--format", "html", "-o", page_path], ok=(1,))
    context, page, problems, requests, url, _ = open_page(browser, page_path)
    expect("fail" in page.get_attribute("#verdict", "class"), "check: the verdict is not marked failed")
    expect(page.text_content("#verdict").strip().lstrip("✘ ").startswith("FAILED"), "check: the verdict does not say FAILED")
    failed_fields = sum(1 for g in verdict["groups"] for f in g.get("fields", []) if f["failed"])
    failed_presence = sum(1 for g in verdict["groups"] if g["presence"] != "both" and g["failed"])
    fail_rows = page.locator("#changes tbody tr.fail").count()
    expect(fail_rows == failed_fields + failed_presence,
           f"check: {fail_rows} failing rows, JSON has {failed_fields} failed fields + {failed_presence} endpoints")
    colour = page.evaluate("() => getComputedStyle(document.querySelector('#changes tr.fail td.fail-text')).color")
    expect(colour == "rgb(180, 35, 24)", f"check: a failing status is {colour}, not red")
    expect(page.locator("#failures li").count() == verdict["failures"], "check: failure list length != JSON failures")
    check_not_blank(page.screenshot(full_page=True), "check")
    finish_page(context, page, problems, requests, url, "check")
    print(f"ok  check page: {fail_rows} failing rows in red, verdict FAILED")

    diff_path = os.path.join(out, "diff.html")
    run([traffic, "diff", base, larger, "--format", "html", "-o", diff_path])
    diff = json.loads(run([traffic, "diff", base, larger, "--format", "json"]))
    context, page, problems, requests, url, _ = open_page(browser, diff_path)
    changed_fields = sum(1 for g in diff["groups"] if g["presence"] == "both"
                         for f in g.get("fields", []) if f["baseline"] != f["now"])
    presence = sum(1 for g in diff["groups"] if g["presence"] != "both")
    rows = page.locator("#changes tbody tr").count()
    expect(rows == changed_fields + presence, f"diff: {rows} rows, JSON has {changed_fields} changes + {presence} endpoints")
    expect(page.locator("#changes tr.fail").count() == 0, "diff: rows marked failed without a verdict")
    before = page.evaluate("() => Array.from(document.querySelectorAll('#changes tbody tr')).map(r => r.textContent)")
    page.locator("#changes thead th:nth-child(6) button").click()  # Δ
    deltas = page.evaluate("""() => Array.from(document.querySelectorAll('#changes tbody tr'))
        .map(r => r.cells[5].getAttribute('data-v')).filter(v => v !== null).map(Number)""")
    expect(deltas == sorted(deltas, reverse=True), f"diff: Δ not descending after a click: {deltas}")
    after = page.evaluate("() => Array.from(document.querySelectorAll('#changes tbody tr')).map(r => r.textContent)")
    expect(sorted(before) == sorted(after), "diff: sorting changed the set of rows")
    finish_page(context, page, problems, requests, url, "diff")
    print(f"ok  diff page: {rows} rows")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traffic", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--screenshot")
    parser.add_argument("--screenshot-sample", default="samples/http-encodings.pcap")
    parser.add_argument("samples", nargs="*")
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("SKIP: Playwright is not installed (make deps: pip install playwright)")
        return 2
    chromium = next((c for c in CHROMIUM_CANDIDATES if os.access(c, os.X_OK)), None)
    if chromium is None:
        print("SKIP: chromium is not installed (make deps: apt-get install chromium)")
        return 2
    os.makedirs(args.out, exist_ok=True)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    samples = args.samples or sorted(glob.glob(os.path.join(root, "samples", "*.pcap")))
    failures = 0
    with sync_playwright() as p:
        # --no-sandbox: the tests run as root in containers, where chromium's sandbox cannot start.
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for sample in samples:
            shot = args.screenshot if args.screenshot and sample.endswith(args.screenshot_sample) else None
            try:
                check_report(browser, args.traffic, sample, args.out, shot)
            except CheckFailed as error:
                failures += 1
                print(f"FAIL {error}")
        # The bounded paths: the rest of the groups in an "other" row, bytes over time instead of a waterfall.
        try:
            check_report(browser, args.traffic, os.path.join(root, "samples", "http-basic.pcap"), args.out, top=2, timeline=5)
        except CheckFailed as error:
            failures += 1
            print(f"FAIL {error}")
        try:
            check_check_page(browser, args.traffic, os.path.join(root, "samples"), args.out)
        except CheckFailed as error:
            failures += 1
            print(f"FAIL {error}")
        browser.close()
    print(f"{len(samples) + 3 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
