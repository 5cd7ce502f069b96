// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconReports
import Foundation
import LinuxSystem

/// The sessions of a scenario's boxes, opened together before the first step.
public enum RemoteBoxes {
    /// How long opening may take (ssh's own connect timeout is 10 s).
    public static let openTimeout = Duration.seconds(20)

    /// Opens a session to each host and asks each for its status; every box must answer.
    /// - Parameters:
    ///   - arguments: the process for a host (the system's ssh by default; tests give another).
    ///   - progress: one line per box opened.
    /// - Throws: `RemoteBoxError` naming each box that could not be reached and why; the
    ///   sessions that did open are closed again.
    public static func open(_ hosts: [Scenario.HostDefinition],
                            arguments: (Scenario.HostDefinition) -> [String] = RemoteBox.sshArguments,
                            progress: (String) -> Void) throws(RemoteBoxError) -> [String: RemoteBox] {
        var boxes: [String: RemoteBox] = [:]
        var statuses: [String: ControlReply.Status] = [:]
        // A session that ended before its request was written fails at the write.
        var failures: [String] = []
        do {
            for host in hosts {
                let box = try RemoteBox(name: host.name, arguments: arguments(host))
                boxes[host.name] = box
                let failure = box.send(.status, what: "status") { reply in
                    statuses[host.name] = reply.status
                    return nil
                }
                if let failure { failures.append(failure) }
            }
        } catch {
            close(boxes.values)
            throw error
        }
        failures += RemoteBox.collect(Array(boxes.values), timeout: openTimeout).failures
        guard failures.isEmpty else {
            close(boxes.values)
            throw RemoteBoxError(message: "cannot drive every box: " + failures.joined(separator: "; "))
        }
        for host in hosts {
            let status = statuses[host.name]
            progress("\(host.name): control session over ssh to \(host.destination): "
                     + "\(status?.device ?? "?"), \(status?.state ?? "?"), \(status?.beaconCount ?? 0) beacon(s) of its own")
        }
        return boxes
    }

    /// Ends every session: all inputs closed first, so that the boxes end theirs together.
    public static func close(_ boxes: some Collection<RemoteBox>) {
        for box in boxes { box.closeInput() }
        for box in boxes { box.close() }
    }
}
