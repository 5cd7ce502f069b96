// SPDX-License-Identifier: GPL-2.0-or-later

// The YAML library's own parser (libyaml, which Yams builds in), read as a stream of events:
// it keeps its state on the heap, so a document of any depth costs it no stack, where composing
// the tree (Yams.compose) recurses once per level.
internal import CYaml

/// How deeply a YAML (or JSON) document nests lists and maps, measured from the YAML library's
/// event stream before any tree is composed: a file of `[[[[...` thousands deep would otherwise
/// overflow the stack of whatever builds or walks its tree.
enum YAMLNesting {
    /// The deepest nesting read (lists and maps within one another): a beacon list needs 3, a
    /// scenario 6; an alias counts as deep as what it stands for.
    static let maximumDepth = 64

    /// Where the document first nests deeper than `limit`, as 1-based line and column; nil
    /// when it never does, or when it stops being YAML first (composing it says why).
    static func firstPlace(deeperThan limit: Int, in text: String) -> Scenario.Place? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer -> Scenario.Place? in
            guard let base = buffer.baseAddress else { return nil }
            yaml_parser_set_input_string(&parser, base, buffer.count)
            var depth = 0
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    depth += 1
                    if depth > limit {
                        return Scenario.Place(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                    }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    depth -= 1
                case YAML_STREAM_END_EVENT, YAML_NO_EVENT:
                    return nil
                default:
                    break
                }
            }
        }
    }
}
