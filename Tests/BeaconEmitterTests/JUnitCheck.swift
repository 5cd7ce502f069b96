// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation

/// A JUnit report read back and held to the shape CI systems read (Jenkins' and GitLab's
/// JUnit schema): `testsuites` of `testsuite` elements with a name and counts that agree with
/// their `testcase` elements; each case a class name and a name, and at most one of
/// `failure`, `error` or `skipped` (a message each), besides `system-out`/`system-err`.
struct JUnitCheck: CustomStringConvertible {
    struct Fault: Error, CustomStringConvertible {
        var description: String
    }

    var suites: [String] = []
    var cases: [String] = []
    var failures = 0
    var errors = 0
    var skipped = 0
    /// Each failure's, error's or skip's message, by case name.
    var messages: [String: String] = [:]

    var description: String {
        "suites \(suites), cases \(cases), failures \(failures), errors \(errors), skipped \(skipped), messages \(messages)"
    }

    static func read(_ path: String) throws -> JUnitCheck {
        let root = try XMLTree.parse(String(contentsOfFile: path, encoding: .utf8))
        guard root.name == "testsuites" else { throw Fault(description: "\(path): the root is not <testsuites>") }
        var report = JUnitCheck()
        for suite in root.children.filter({ $0.name == "testsuite" }) {
            guard let name = suite.attributes["name"], !name.isEmpty else {
                throw Fault(description: "\(path): a testsuite without a name")
            }
            report.suites.append(name)
            var counts = (tests: 0, failures: 0, errors: 0, skipped: 0)
            for testCase in suite.children.filter({ $0.name == "testcase" }) {
                guard let caseName = testCase.attributes["name"], !caseName.isEmpty,
                      testCase.attributes["classname"]?.isEmpty == false else {
                    throw Fault(description: "\(path): a testcase without a name or a classname")
                }
                counts.tests += 1
                report.cases.append(caseName)
                var outcomes = 0
                for child in testCase.children {
                    switch child.name {
                    case "failure", "error", "skipped":
                        outcomes += 1
                        guard let message = child.attributes["message"], !message.isEmpty else {
                            throw Fault(description: "\(path): \(caseName): <\(child.name)> without a message")
                        }
                        report.messages[caseName] = message
                        if child.name == "failure" { counts.failures += 1 }
                        if child.name == "error" { counts.errors += 1 }
                        if child.name == "skipped" { counts.skipped += 1 }
                    case "system-out", "system-err":
                        break
                    default:
                        throw Fault(description: "\(path): \(caseName): an element <\(child.name)> JUnit has not")
                    }
                }
                if outcomes > 1 { throw Fault(description: "\(path): \(caseName): more than one outcome") }
            }
            for (attribute, count) in [("tests", counts.tests), ("failures", counts.failures), ("errors", counts.errors)] {
                guard suite.attributes[attribute] == String(count) else {
                    throw Fault(description: "\(path): \(name): \(attribute)=\(suite.attributes[attribute] ?? "none"), "
                                + "counted \(count)")
                }
            }
            if let declared = suite.attributes["skipped"], declared != String(counts.skipped) {
                throw Fault(description: "\(path): \(name): skipped=\(declared), counted \(counts.skipped)")
            }
            guard let time = suite.attributes["time"], Double(time) != nil else {
                throw Fault(description: "\(path): \(name): no time in seconds")
            }
            report.failures += counts.failures
            report.errors += counts.errors
            report.skipped += counts.skipped
        }
        if report.suites.isEmpty { throw Fault(description: "\(path): no testsuite") }
        return report
    }
}

/// Just enough of XML for the reports the tool writes, read strictly: a declaration, elements
/// with double-quoted attributes, text, the five entities and numeric references; every tag
/// closed in order, nothing after the root.
struct XMLTree {
    var name: String
    var attributes: [String: String] = [:]
    var children: [XMLTree] = []
    var text = ""

    struct Fault: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ text: String) throws -> XMLTree {
        var reader = Reader(characters: Array(text.unicodeScalars))
        reader.skipSpace()
        if reader.starts("<?xml") {
            guard let end = reader.find("?>") else { throw Fault(description: "an XML declaration not closed") }
            reader.index = end + 2
        }
        reader.skipSpace()
        let root = try reader.element()
        reader.skipSpace()
        guard reader.index == reader.characters.count else { throw Fault(description: "text after the root element") }
        return root
    }

    private struct Reader {
        let characters: [Unicode.Scalar]
        var index = 0

        func starts(_ text: String) -> Bool { characters[index...].starts(with: text.unicodeScalars) }

        func find(_ text: String) -> Int? {
            var at = index
            while at < characters.count {
                if characters[at...].starts(with: text.unicodeScalars) { return at }
                at += 1
            }
            return nil
        }

        mutating func skipSpace() {
            while index < characters.count, characters[index].properties.isWhitespace { index += 1 }
        }

        mutating func name() throws -> String {
            let start = index
            while index < characters.count, characters[index] != "=", characters[index] != ">", characters[index] != "/",
                  !characters[index].properties.isWhitespace { index += 1 }
            guard index > start else { throw Fault(description: "a name expected at \(index)") }
            return String(String.UnicodeScalarView(characters[start..<index]))
        }

        mutating func decoded(upTo end: Unicode.Scalar) throws -> String {
            var out = String.UnicodeScalarView()
            while index < characters.count, characters[index] != end {
                let scalar = characters[index]
                guard scalar != "<" else { throw Fault(description: "'<' in text or a value at \(index)") }
                if scalar == "&" {
                    guard let semicolon = characters[index...].firstIndex(of: ";") else { throw Fault(description: "'&' alone") }
                    let entity = String(String.UnicodeScalarView(characters[(index + 1)..<semicolon]))
                    let named: [String: Unicode.Scalar] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
                    if let value = named[entity] {
                        out.append(value)
                    } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let value = Unicode.Scalar(code) {
                        out.append(value)
                    } else {
                        throw Fault(description: "an unknown entity &\(entity);")
                    }
                    index = semicolon + 1
                } else {
                    out.append(scalar)
                    index += 1
                }
            }
            return String(out)
        }

        mutating func element() throws -> XMLTree {
            guard index < characters.count, characters[index] == "<" else { throw Fault(description: "an element expected at \(index)") }
            index += 1
            var element = XMLTree(name: try name())
            while true {
                skipSpace()
                guard index < characters.count else { throw Fault(description: "<\(element.name) not closed") }
                if starts("/>") {
                    index += 2
                    return element
                }
                if characters[index] == ">" {
                    index += 1
                    break
                }
                let key = try name()
                guard starts("=\"") else { throw Fault(description: "\(element.name): \(key) without a quoted value") }
                index += 2
                guard element.attributes[key] == nil else { throw Fault(description: "\(element.name): \(key) twice") }
                element.attributes[key] = try decoded(upTo: "\"")
                index += 1
            }
            while true {
                element.text += try decoded(upTo: "<")
                guard index < characters.count else { throw Fault(description: "<\(element.name)> not closed") }
                if starts("</") {
                    index += 2
                    let closing = try name()
                    guard closing == element.name, index < characters.count, characters[index] == ">" else {
                        throw Fault(description: "</\(closing)> closes <\(element.name)>")
                    }
                    index += 1
                    return element
                }
                element.children.append(try self.element())
            }
        }
    }
}
