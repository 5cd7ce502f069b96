// SPDX-License-Identifier: GPL-2.0-or-later

/// What every report page shares (`run --report`, `audit --report`): one self-contained HTML
/// document (inline CSS and SVG, no script, nothing fetched), its text escaped, its numbers
/// written short. Pass and fail are words and marks, not colours alone; it prints.
public enum HTMLPage {
    /// The document: `style` (CSS) after the shared rules, `body` as it is.
    public static func document(title: String, style: String = "", body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="\(contentSecurityPolicy)">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #1b1b1b; }
        h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.5em; }
        .verdict { padding: 0 .4em; border: 2px solid; border-radius: 3px; }
        .pass { color: #17612a; } .fail { color: #a3161b; } .warn, .inconclusive { color: #8a5a00; }
        svg { width: 100%; height: auto; display: block; }
        svg text { font: 11px system-ui, sans-serif; fill: #1b1b1b; }
        .axis line, .grid { stroke: #e0e0e0; }
        table { border-collapse: collapse; width: 100%; } th, td { border-bottom: 1px solid #ddd; padding: .3em .4em;
          text-align: left; vertical-align: top; } td.detail { word-break: break-word; } td.nowrap { white-space: nowrap; }
        pre.error { white-space: pre-wrap; }
        @media print { body { max-width: none; margin: 0; } section { break-inside: avoid; } }
        \(style)
        </style></head>
        <body>
        \(body)</body></html>

        """
    }

    /// A page for what ended before there was anything to show: why.
    public static func error(title: String, startedUnix: Double, message: String, what: String = "the run did not start") -> String {
        document(title: "ERROR \(title)", body: "<header><h1><span class=\"verdict fail\">ERROR</span> \(escape(title))</h1>\n"
                 + "<p>Started \(Timestamp.iso8601(startedUnix)); \(escape(what)).</p></header>\n"
                 + "<section><h2>Why</h2><pre class=\"error\">\(escape(message))</pre></section>\n")
    }

    /// What the page may do, whatever text from outside (a phone's line, a name heard on the
    /// air, a file's) ever slips through unescaped: run no script, load nothing, post nothing,
    /// change no base; its own inline styles and SVG are all it has.
    public static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

    /// Text for the page's elements and attributes: the one escaper of HTML, SVG and XML
    /// (`XMLText.escape`), which walks Unicode scalars. A walk by `Character` would miss a `<`
    /// that a prepended scalar (U+0600 ARABIC NUMBER SIGN) or a combining mark joins into one
    /// grapheme cluster, and copy it raw into the markup.
    public static func escape(_ text: String) -> String {
        XMLText.escape(text)
    }

    /// A number to three decimals at most, whole ones without a point: `12`, `0.237`.
    public static func number(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? "\(Int(rounded))" : "\(rounded)"
    }

    /// Axis ticks about ten across `0...end`: a step of 1, 2 or 5 times a power of ten.
    public static func tickStep(_ end: Double) -> Double {
        guard end > 0, end.isFinite else { return 1 }
        var step = 1e-3
        while end / step > 12 {
            for factor in [2.0, 2.5, 2.0] {
                step *= factor
                if end / step <= 12 { break }
            }
        }
        return step
    }
}
