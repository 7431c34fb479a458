extension HTMLPage {
    /// The page's style sheet. System fonts only (nothing to fetch); every colour pairs with text or a
    /// pattern that says the same, so the page reads in greyscale and prints (`@media print`) without the
    /// controls.
    static let style = """
        :root{--fg:#1b1f24;--muted:#59636e;--line:#d0d7de;--bg:#fff;--panel:#f6f8fa;--bad:#b42318;--good:#1a7f37;
        --c-line:#6e40c9;--c-header:#0969da;--c-cookie:#bf8700;--c-body:#1a7f37;--c-tls:#8c959f;--c-overhead:#cf222e;
        --c-tunnel:#953800;--c-nonhttp:#d0d7de;--c-req:#0969da;--c-resp:#1a7f37;--c-h2:#1b7c83}
        *{box-sizing:border-box}
        body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
        main{max-width:1280px;margin:0 auto;padding:16px 20px 40px}
        h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
        .muted{color:var(--muted)}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
        dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:6px 16px;margin:12px 0}
        dl.facts div{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:6px 10px}
        dl.facts dt{font-size:12px;color:var(--muted)}dl.facts dd{margin:0;font-size:16px;font-weight:600}
        .legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0;padding:0;list-style:none;font-size:13px}
        .legend li{display:flex;align-items:center;gap:5px}
        .sw{display:inline-block;width:12px;height:12px;border:1px solid #0003;border-radius:2px}
        .s-line{fill:var(--c-line);background:var(--c-line)}.s-header{fill:var(--c-header);background:var(--c-header)}
        .s-cookie{fill:var(--c-cookie);background:var(--c-cookie)}.s-body{fill:var(--c-body);background:var(--c-body)}
        .s-tls{fill:var(--c-tls);background:var(--c-tls)}.s-overhead{fill:var(--c-overhead);background:var(--c-overhead)}
        .s-tunnel{fill:var(--c-tunnel);background:var(--c-tunnel)}.s-nonhttp{fill:var(--c-nonhttp);background:var(--c-nonhttp)}
        .s-req{fill:var(--c-req);background:var(--c-req)}.s-resp{fill:var(--c-resp);background:var(--c-resp)}
        .s-h2{fill:var(--c-h2);background:var(--c-h2)}
        svg text{font:11px system-ui,sans-serif}
        .bar{display:block;width:100%;height:22px}
        .rowbar{display:block;width:140px;height:12px}
        .treemap-wrap{position:relative}
        #treemap{width:100%;height:auto;border:1px solid var(--line);background:var(--panel)}
        #treemap rect{stroke:#fff;stroke-width:1;vector-effect:non-scaling-stroke}
        #treemap .tm-host-frame{fill:none;stroke:#1b1f24;stroke-width:2;pointer-events:none}
        #treemap .tm-leaf{cursor:zoom-in}#treemap .zoomed .tm-leaf{cursor:default}
        #treemap .tm-leaf:hover,#treemap .tm-leaf:focus{stroke:#000;stroke-width:2;outline:none}
        #treemap text{pointer-events:none;fill:#000}
        .tm-bar{display:flex;gap:12px;align-items:center;min-height:28px}
        #tm-details{font-variant-numeric:tabular-nums}
        button{font:inherit;padding:2px 10px;border:1px solid var(--line);border-radius:6px;background:var(--panel);cursor:pointer}
        .controls{display:flex;gap:12px;align-items:center;margin:6px 0}
        input[type=search]{font:inherit;padding:4px 8px;width:320px;max-width:100%;border:1px solid var(--line);border-radius:6px}
        .table-wrap{overflow-x:auto}
        table{border-collapse:collapse;width:100%;font-size:13px}
        th,td{padding:3px 6px;border-bottom:1px solid var(--line);vertical-align:middle}
        th{background:var(--panel);text-align:left;position:sticky;top:0;white-space:nowrap}
        th button{border:0;background:none;padding:0;font-weight:600;cursor:pointer}
        th[aria-sort=ascending] button::after{content:" \\25B2"}th[aria-sort=descending] button::after{content:" \\25BC"}
        td.key{max-width:360px;overflow-wrap:break-word}
        tr.other td{font-style:italic;background:var(--panel)}
        tr.fail td{background:#fff0ee}.fail-text,.bad{color:var(--bad);font-weight:700}.good{color:var(--good);font-weight:700}
        .verdict{padding:10px 14px;border-radius:6px;font-size:18px;font-weight:700;margin:8px 0;border:2px solid}
        .verdict.pass{color:var(--good);border-color:var(--good);background:#edfbef}
        .verdict.fail{color:var(--bad);border-color:var(--bad);background:#fff0ee}
        .verdict.info{color:var(--fg);border-color:var(--line);background:var(--panel)}
        .waterfall{width:100%;height:auto;border:1px solid var(--line)}
        .waterfall .gap{stroke:#8c959f;stroke-width:1}
        .note{font-size:12px;color:var(--muted)}
        .sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
        @media print{.controls,.tm-bar button,#filter{display:none!important}main{max-width:none;padding:0}
        h2{break-after:avoid}tr,svg{break-inside:avoid}th{position:static}body{font-size:11px}}

        """
}
