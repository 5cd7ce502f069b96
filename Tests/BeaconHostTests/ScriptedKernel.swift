// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// A fake management interface driven by a script: each step names the command the host must
/// send next (as a typed command's packet) and the packets the kernel answers with. Anything
/// else fails the test. Steps without a command are events the kernel sends on its own.
final class ScriptedKernel: PacketTransport {
    let name = "the scripted kernel"
    typealias Step = Script<MgmtPacket, MgmtPacket>.Step
    private var script: Script<MgmtPacket, MgmtPacket>

    init(_ steps: [Step]) {
        script = Script(steps)
    }

    var remainingSteps: Int { script.steps.count }
    var sent: [MgmtPacket] { script.sent }

    /// Queues events as if the kernel sent them now.
    func deliver(_ events: [MgmtEvent], index: UInt16 = 0) {
        script.queued += events.map { $0.packet(index: index) }
    }

    func send(_ packet: MgmtPacket) throws(TransportError) {
        // Whatever a test's path sends, it must be a length the kernel accepts.
        if let fault = KernelLengthRule.fault(packet.bytes) {
            Issue.record("the kernel would refuse this command: \(fault)")
        }
        script.received(packet) { $0.map { HexText.format($0.bytes, separator: " ") } ?? "none" }
    }

    func receive(timeout: Duration) throws(TransportError) -> MgmtReceiveResult {
        script.next().map { .packet($0) } ?? .timedOut
    }

    func close() {}
}

/// The kernel's Command Complete for `command` on hci0, with its return parameters.
func completes<C: MgmtCommand>(_ command: C, status: MgmtStatus = .success, returning parameters: [UInt8] = [])
    -> ScriptedKernel.Step {
    .init(command: command.packet(index: 0),
          answers: [MgmtEvent.commandComplete(opcode: C.opcode, status: status, returnParameters: parameters).packet(index: 0)])
}
