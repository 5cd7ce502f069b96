// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconReports
import Foundation
import Testing

/// The reports' one escaper, against text from outside (a phone's log line, a name heard on
/// the air): no markup gets through, whatever scalar is glued to a special character.
@Suite struct HTMLPageTests {
    /// The line a scripted phone printed to run script in a report: U+0600 (a Prepend scalar)
    /// before `<` and `>` made each one grapheme cluster with it.
    @Test func aPrependedScalarDoesNotHideMarkup() {
        let line = "BEACON-EMIT enter region=store \u{0600}<img src=x onerror=document.title='PWNED1' \u{0600}>"
        let escaped = HTMLPage.escape(line)
        #expect(!escaped.unicodeScalars.contains("<") && !escaped.unicodeScalars.contains(">"), "\(escaped)")
        #expect(escaped.contains("\u{0600}&lt;img src=x onerror=document.title=&apos;PWNED1&apos; \u{0600}&gt;"), "\(escaped)")
    }

    /// Every Unicode scalar glued before and after each special character (every Prepend,
    /// Extend, ZWJ and combining case among them): none of the five is left raw, and `&` only
    /// ever starts one of the entities.
    @Test func everyScalarBesideEverySpecialCharacterIsEscaped() {
        let specials: [Unicode.Scalar] = ["<", ">", "\"", "'", "&"]
        var text = String.UnicodeScalarView()
        // Under emulation (scripts/arm64-test sets BEACON_EMIT_EMULATED), where the whole range
        // took 333 s: every scalar to U+2FFF (the combining marks and the scripts that use
        // them) and every 61st beyond; the escaper's arithmetic is the same on both machines.
        let emulated = ProcessInfo.processInfo.environment["BEACON_EMIT_EMULATED"] == "1"
        for value in 0...0x10FFFF where !emulated || value < 0x3000 || value % 61 == 0 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for special in specials {
                text.append(scalar)
                text.append(special)
                text.append(scalar)
            }
        }
        let escaped = HTMLPage.escape(String(text)).unicodeScalars
        for special in specials.dropLast() { #expect(!escaped.contains(special), "a raw \(special) is left") }
        // Each & begins an entity: what follows it up to the next ; is one of the five names or &#10;.
        let entities: Set<String> = ["amp", "lt", "gt", "quot", "apos", "#10"]
        var index = escaped.startIndex
        var bad = 0
        while let amp = escaped[index...].firstIndex(of: "&") {
            let end = escaped[amp...].firstIndex(of: ";") ?? escaped.endIndex
            if !entities.contains(String(String.UnicodeScalarView(escaped[escaped.index(after: amp)..<end]))) { bad += 1 }
            index = end == escaped.endIndex ? end : escaped.index(after: end)
        }
        #expect(bad == 0, "\(bad) & that begin no entity")
    }

    /// The page forbids script, loads and forms whatever markup slips through.
    @Test func thePageCarriesAContentSecurityPolicy() {
        let page = HTMLPage.document(title: "t", body: "<p>x</p>")
        #expect(page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                              + "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">"))
        let policy = page.firstRange(of: "Content-Security-Policy")?.lowerBound, title = page.firstRange(of: "<title>")?.lowerBound
        #expect(policy != nil && title != nil && policy! < title!, "the policy comes before anything from outside")
    }
}
