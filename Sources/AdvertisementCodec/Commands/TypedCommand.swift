// SPDX-License-Identifier: GPL-2.0-or-later

/// The code that names a command in its command language: an `HCIOpcode` or a `MgmtOpcode`.
public protocol CommandCode: Hashable, Sendable, CustomStringConvertible {
    /// The specification's name, where this codec knows it.
    var name: String? { get }
    /// What a command of this language is called in errors: "HCI command", "management command".
    static var commandKind: String { get }
    /// What the code is called in that language's packets: "opcode", "code".
    static var fieldName: String { get }
}

/// A typed command, of either language the host speaks (HCI, or the kernel's management
/// interface): its code, how its parameters are written and read, and what its Command
/// Complete returns after the status. `HCICommand` and `MgmtCommand` fix the code's type.
public protocol TypedCommand: Hashable, Sendable {
    associatedtype Code: CommandCode
    associatedtype ReturnParameters: CommandReturnParameters = NoReturnParameters
    static var opcode: Code { get }
    /// Appends the command's parameters (without the packet's header).
    func encodeParameters(into buffer: inout [UInt8])
    /// Reads the parameters back, for taps, proxies, scripted controllers and captures.
    /// - Throws: `CodecError` when they do not have this command's layout.
    init(parameters: ArraySlice<UInt8>) throws(CodecError)
}

/// What a Command Complete carries after its status.
public protocol CommandReturnParameters: Hashable, Sendable {
    /// - Throws: `CodecError` when the bytes are shorter than the layout. Bytes past it are
    ///   ignored, as both specifications' forward-compatibility rules ask.
    init(parsing bytes: ArraySlice<UInt8>) throws(CodecError)
}

/// For commands whose Command Complete carries nothing the host reads but the status.
public struct NoReturnParameters: CommandReturnParameters {
    public init() {}
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {}
}

/// A command without parameters.
public protocol ParameterlessCommand: TypedCommand {
    init()
}

extension ParameterlessCommand {
    public func encodeParameters(into buffer: inout [UInt8]) {}
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        try ByteReader(parameters, structure: Self.opcode.name ?? Code.commandKind).expectEnd()
        self.init()
    }
}

extension TypedCommand {
    /// The parameters as `encodeParameters(into:)` writes them.
    public var parameters: [UInt8] {
        var parameters: [UInt8] = []
        encodeParameters(into: &parameters)
        return parameters
    }

    /// Checks a packet's code before its parameters are read.
    /// - Throws: `CodecError` when `code` is not this command's.
    static func expectCode(_ code: Code) throws(CodecError) {
        guard code == opcode else {
            throw CodecError(structure: Code.commandKind, offset: 0, reason: .unexpectedValue(
                field: Code.fieldName,
                expected: opcode.description, found: code.description))
        }
    }
}
