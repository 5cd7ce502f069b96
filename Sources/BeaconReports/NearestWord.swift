// SPDX-License-Identifier: GPL-2.0-or-later

/// The word a mistyped one was most likely meant to be: for "did you mean" in every error that
/// names an unknown key, option or command.
public enum NearestWord {
    /// The candidate fewest edits (insertions, deletions, substitutions; case aside) from
    /// `word`, when it is near enough to have been meant: at most 2 edits, or a third of the
    /// word's length. Ties go to the first in alphabetical order.
    public static func nearest(to word: String, in candidates: some Sequence<String>) -> String? {
        let wanted = Array(word.lowercased())
        var best: (word: String, edits: Int)?
        for candidate in candidates.sorted() {
            let edits = distance(wanted, Array(candidate.lowercased()))
            if best.map({ edits < $0.edits }) ?? true { best = (candidate, edits) }
        }
        guard let best, best.edits <= max(2, word.count / 3), best.edits < word.count else { return nil }
        return best.word
    }

    /// Levenshtein distance, one row at a time.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
