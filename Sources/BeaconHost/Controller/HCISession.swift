// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The advertising core, as an `HCISession` keeps it on the air: `advertise`'s beacons or a
/// scenario's coming and going. The session watches, the supervisor decides, this puts back.
extension Advertiser {
    /// How long each beacon stays on the air when they take turns.
    public var rotationPeriod: Duration { options.rotationPeriod }
}

/// Beacons put on the air with HCI commands (a raw kernel socket, the user channel, an H4
/// link), watched for what knocks them off: another program resetting the controller or
/// touching this emitter's sets (seen on a raw kernel socket), a hardware error, the adapter
/// going down or away, the link closing.
package final class HCISession: AdvertisingSession {
    public let advertiser: Advertiser
    private var controller: HCIController
    /// The kernel adapter behind a raw socket, whose state the kernel reports.
    private var kernelIndex: Int?
    /// The adapter's public address, when it was named by it: followed to another number, and
    /// another adapter on its number is not ours.
    private let follows: BluetoothAddress?
    private var toldOfOtherAdapter = false
    /// The host owns the controller (H4, user channel): it is reset before the beacons go back.
    private let ownsController: Bool
    /// Opens the link again after it closed (nil: a closed link ends the run).
    private let reconnect: (() throws(HostError) -> HCIController)?
    private var observed: [Disruption] = []
    public private(set) var disruptionsSeen: (count: Int, last: Disruption?) = (0, nil)
    private var linkLost = false
    private var nextReconnect = ContinuousClock.now
    private var reconnectDelay = Duration.milliseconds(200)
    /// `--up`: a kernel adapter that comes back after going away (unplugged) is brought up, as
    /// the first one was; one that someone takes down is left down.
    private let bringsUpReturningAdapter: Bool
    private var adapterWentAway = false
    /// Called with each step, for `--verbose`.
    public var log: ((String) -> Void)?
    /// What the user should see (the adapter followed to its new number).
    public var notice: ((String) -> Void)?

    /// - Parameters:
    ///   - kernelIndex: the adapter, for a raw kernel socket (nil for H4 links and the user channel).
    ///   - bringsUpReturningAdapter: `--up`: a kernel adapter that comes back is brought up.
    ///   - reconnect: opens a new link to the same controller; nil when a lost link ends the run.
    ///   - follows: the kernel adapter's address, when it was named by it (`reconnect` opens it
    ///     where it is then).
    public init(advertiser: Advertiser, kernelIndex: Int?, ownsController: Bool, bringsUpReturningAdapter: Bool = false,
                follows: BluetoothAddress? = nil, reconnect: (() throws(HostError) -> HCIController)?) {
        self.advertiser = advertiser
        self.controller = advertiser.controller
        self.kernelIndex = kernelIndex
        self.follows = follows
        self.ownsController = ownsController
        self.bringsUpReturningAdapter = bringsUpReturningAdapter
        self.reconnect = reconnect
        watchOthers(on: controller)
    }

    public var plan: AdvertisingPlan? { advertiser.plan }
    public var rotationPeriod: Duration { advertiser.rotationPeriod }

    /// The loop the commands wait in, kept for a link opened again.
    private weak var loop: (any CommandWaitLoop)?

    public func waitForAnswers(in loop: (any CommandWaitLoop)?) {
        self.loop = loop
        controller.loop = loop
    }

    /// Watches what the host did not ask for: on a kernel socket other programs' commands and
    /// their answers; on an owned controller, an unsolicited Reset completing (a bridge or a
    /// bootloader resetting it); and every Hardware Error, whichever command's wait sees it.
    private func watchOthers(on controller: HCIController) {
        controller.observer = { [weak self] packet in
            guard let self, let disruption = self.advertiser.isDisrupted(by: packet) else { return }
            self.disrupted(disruption)
        }
        controller.hardwareErrorSeen = { [weak self] code in self?.disrupted(.hardwareError(code: code)) }
    }

    private func disrupted(_ disruption: Disruption) {
        observed.append(disruption)
        disruptionsSeen = (disruptionsSeen.count + 1, disruption)
    }

    /// The observer and `hardwareErrorSeen` hear of disruptions as they arrive, so only the
    /// failure is news: a set of ours that the controller no longer knows is off the air.
    public func catchUp(after failure: HostError) {
        if case let .controllerRefused(opcode, status, _) = failure, status == .unknownAdvertisingIdentifier {
            disrupted(.advertisingLost("\(opcode.name ?? opcode.description) refused: Unknown Advertising Identifier"))
        }
    }

    public func takeIn() throws(HostError) -> SessionSignal {
        if !observed.isEmpty { return .disrupted(observed.removeFirst()) }
        if linkLost { return .quiet }
        do {
            // What has arrived, read up to the first thing the observer reports.
            _ = try controller.nextEvent(timeout: .zero)
            if !observed.isEmpty { return .disrupted(observed.removeFirst()) }
            return .quiet
        } catch let .hardwareError(code) {
            // Put in `observed` by hardwareErrorSeen, behind anything seen before it.
            return .disrupted(observed.isEmpty ? .hardwareError(code: code) : observed.removeFirst())
        } catch let .transport(error, device) {
            // Closed at once: a socket still bound to an unplugged adapter keeps the kernel from
            // freeing its index, and the adapter would come back under another name.
            controller.transport.close()
            if let kernelIndex {
                // A raw socket on an adapter that was unregistered fails; one that is down does not.
                guard !KernelSocketTransport.exists(index: kernelIndex) else { throw .transport(error, device: device) }
                linkLost = true
                adapterWentAway = true
                return .disrupted(.adapterRemoved)
            }
            guard reconnect != nil else { throw .transport(error, device: device) }
            linkLost = true
            reconnectDelay = .milliseconds(200)
            nextReconnect = .now
            return .disrupted(.linkClosed(device))
        }
    }

    /// The link's socket, while there is one.
    public var pollDescriptors: [Int32] {
        linkLost ? [] : [controller.transport.pollDescriptor].compactMap { $0 }
    }

    public func availability() -> AdapterAvailability {
        if let kernelIndex, !linkLost {
            return KernelSocketTransport.isUp(index: kernelIndex) ? .usable
                : KernelSocketTransport.exists(index: kernelIndex) ? .down : .gone
        }
        guard linkLost else { return .usable }
        if let follows, let index = kernelIndex {
            guard let now = KernelSocketTransport.index(of: follows) else {
                if !toldOfOtherAdapter, let other = KernelSocketTransport.address(index: index) {
                    log?("hci\(index) is back, but it is another adapter (\(other)): waiting for \(follows)")
                    toldOfOtherAdapter = true
                }
                return .gone
            }
            toldOfOtherAdapter = false
            if now != index {
                kernelIndex = now
                notice?("the adapter \(follows) is back as hci\(now) (was hci\(index)): the beacons follow it")
            }
        }
        if let kernelIndex, !KernelSocketTransport.isUp(index: kernelIndex) {
            guard KernelSocketTransport.exists(index: kernelIndex) else { return .gone }
            guard bringsUpReturningAdapter && adapterWentAway else { return .down }
            do {
                try KernelSocketTransport.bringUp(index: kernelIndex)
                log?("the adapter is back: brought it up (bringing it up was asked)")
            } catch {
                log?("the adapter is back but does not come up yet: \(error)")
                return .down
            }
        }
        // A lost link is opened again, at most every few seconds while it fails.
        guard let reconnect, ContinuousClock.now >= nextReconnect else { return .gone }
        do {
            let (trace, reportUnsolicited) = (controller.trace, controller.reportUnsolicited)
            controller = try reconnect()
            controller.trace = trace
            controller.reportUnsolicited = reportUnsolicited
            controller.loop = loop
            watchOthers(on: controller)
            linkLost = false
            adapterWentAway = false
            log?("the link to the controller is open again")
            return .usable
        } catch {
            log?("cannot reopen the link yet: \(error)")
            nextReconnect = .now + reconnectDelay
            reconnectDelay = min(reconnectDelay * 2, .seconds(5))
            return .gone
        }
    }

    /// Closes the link as it is now (one opened again after the first closed is the session's).
    public func closeLink() {
        controller.transport.close()
    }

    public func restore() throws(HostError) {
        observed.removeAll()
        if ownsController {
            log?("reset the controller (HCI Reset)")
            try controller.send(Reset())
        }
        try advertiser.restore(on: controller, controllerWasReset: ownsController)
        observed.removeAll()  // what the restore itself caused (a kernel echo of a reset) is not news
    }

    public func rotate() throws(HostError) { try advertiser.rotate() }

    public func stop() throws(HostError) {
        guard !linkLost else { return }
        if let kernelIndex, !KernelSocketTransport.isUp(index: kernelIndex) { return }  // a down adapter forgets its sets
        try advertiser.stop()
    }
}
