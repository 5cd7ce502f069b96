// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
@testable import BeaconHost
import Testing

/// A fake management interface driven by a script: each step names the command the host must
/// send next (as a typed command's packet) and the packets the kernel answers with. Anything
/// else fails the test. Steps without a command are events the kernel sends on its own.
final class ScriptedKernel: MgmtTransport {
    let name = "the scripted kernel"
    struct Step {
        var command: MgmtPacket?
        var answers: [MgmtPacket]
    }

    private var steps: [Step]
    private var queued: [MgmtPacket] = []
    private(set) var sent: [MgmtPacket] = []

    init(_ steps: [Step]) {
        self.steps = steps
        deliverUnsolicited()
    }

    var remainingSteps: Int { steps.count }

    /// Queues events as if the kernel sent them now.
    func deliver(_ events: [MgmtEvent], index: UInt16 = 0) {
        queued += events.map { $0.packet(index: index) }
    }

    func send(_ packet: MgmtPacket) throws(TransportError) {
        sent.append(packet)
        guard let step = steps.first else {
            Issue.record("unexpected command after the script ended: \(packet)")
            return
        }
        #expect(packet == step.command, "command \(sent.count)")
        steps.removeFirst()
        queued += step.answers
        deliverUnsolicited()
    }

    private func deliverUnsolicited() {
        while let step = steps.first, step.command == nil {
            queued += step.answers
            steps.removeFirst()
        }
    }

    func receive(timeout: Duration, interrupt: Int32?) throws(TransportError) -> MgmtReceiveResult {
        queued.isEmpty ? .timedOut : .packet(queued.removeFirst())
    }

    func close() {}
}

/// The kernel's Command Complete for `command` on hci0, with its return parameters.
func completes<C: MgmtCommand>(_ command: C, status: MgmtStatus = .success, returning parameters: [UInt8] = [])
    -> ScriptedKernel.Step {
    .init(command: command.packet(index: 0),
          answers: [MgmtEvent.commandComplete(opcode: C.opcode, status: status, returnParameters: parameters).packet(index: 0)])
}
