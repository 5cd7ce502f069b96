// SPDX-License-Identifier: GPL-2.0-or-later

// The YAML library's own parser (libyaml, which Yams builds in), read as a stream of events:
// it keeps its state on the heap, so a document of any depth costs it no stack, where composing
// the tree (Yams.compose) recurses once per level.
internal import CYaml

/// How large a YAML (or JSON) document is once composed, measured from the YAML library's event
/// stream before any tree is built: how deeply it nests lists and maps, and how many values it
/// holds, each alias (`*name`) counted as what its anchor (`&name`) holds. A file of `[[[[...`
/// thousands deep, or a chain of aliases each wrapping the one before (`- &a [*a]`, 2 levels
/// deep as written, 50,000 once composed), would otherwise overflow the stack of whatever builds,
/// walks or frees its tree; aliases that repeat one another make a small file stand for billions
/// of values.
enum YAMLNesting {
    /// The deepest nesting read (lists and maps within one another): a beacon list needs 3, a
    /// scenario 6; an alias counts as deep as what it stands for.
    static let maximumDepth = 64

    /// What makes a document too large, and where (1-based line and column).
    enum Excess: Equatable {
        /// Lists and maps nest deeper than the limit here; `throughAlias` when an alias makes it so.
        case tooDeep(Scenario.Place, throughAlias: Bool)
        /// The values counted reach past the limit here (an alias counts every value it stands for).
        case tooManyValues(Scenario.Place)
    }

    /// What an anchored node holds: how many levels of lists and maps (0 for a scalar), and how
    /// many values (itself included).
    private struct Extent {
        var height = 0
        var values = 1
    }

    /// A list or map being read: its anchor, and the extent of what it holds so far.
    private struct Open {
        var anchor: String?
        var deepestChild = 0
        var values = 1
    }

    /// The first excess of the document over `depth` levels or `values` values, aliases followed
    /// (each stands for what its anchor held when it was read, as composing makes it); nil when
    /// there is none, or when the text stops being YAML first (composing it says why). Linear in
    /// the text: each anchor's extent is kept, never expanded.
    static func measure(_ text: String, depth limit: Int, values budget: Int) -> Excess? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer -> Excess? in
            guard let base = buffer.baseAddress else { return nil }
            yaml_parser_set_input_string(&parser, base, buffer.count)
            var open: [Open] = []
            var anchors: [String: Extent] = [:]
            var total = 0
            // A finished node of `extent`: counted, and added to the list or map it is in.
            func finished(_ extent: Extent, anchor: String?) {
                if let anchor { anchors[anchor] = extent }
                guard !open.isEmpty else { return }
                open[open.count - 1].deepestChild = max(open[open.count - 1].deepestChild, extent.height)
                open[open.count - 1].values = min(Int.max / 2, open[open.count - 1].values + extent.values)
            }
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                let place = Scenario.Place(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                switch event.type {
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    total += 1
                    if total > budget { return .tooManyValues(place) }
                    open.append(Open(anchor: anchorName(event)))
                    if open.count > limit { return .tooDeep(place, throughAlias: false) }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    guard let node = open.popLast() else { return nil }
                    finished(Extent(height: node.deepestChild + 1, values: node.values), anchor: node.anchor)
                case YAML_SCALAR_EVENT:
                    total += 1
                    if total > budget { return .tooManyValues(place) }
                    finished(Extent(), anchor: anchorName(event))
                case YAML_ALIAS_EVENT:
                    // An alias to no anchor is left for composing to refuse, as one value.
                    let extent = alias(event).flatMap { anchors[$0] } ?? Extent()
                    total = min(Int.max / 2, total + extent.values)
                    if total > budget { return .tooManyValues(place) }
                    if open.count + extent.height > limit { return .tooDeep(place, throughAlias: true) }
                    finished(extent, anchor: nil)
                case YAML_STREAM_END_EVENT, YAML_NO_EVENT:
                    return nil
                default:
                    break
                }
            }
        }
    }

    /// The anchor (`&name`) a scalar, list or map event carries.
    private static func anchorName(_ event: yaml_event_t) -> String? {
        let anchor: UnsafeMutablePointer<yaml_char_t>?
        switch event.type {
        case YAML_SCALAR_EVENT: anchor = event.data.scalar.anchor
        case YAML_SEQUENCE_START_EVENT: anchor = event.data.sequence_start.anchor
        case YAML_MAPPING_START_EVENT: anchor = event.data.mapping_start.anchor
        default: anchor = nil
        }
        return anchor.map { String(cString: $0) }
    }

    /// The anchor an alias event names.
    private static func alias(_ event: yaml_event_t) -> String? {
        event.data.alias.anchor.map { String(cString: $0) }
    }
}
