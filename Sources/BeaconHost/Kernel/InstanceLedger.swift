// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import LinuxSystem

/// Keeps this process's record for one adapter current while its instances change, and
/// removes it once nothing of ours is left (or marks it kept, for `--keep`).
package final class InstanceLedger {
    public private(set) var adapter: String
    public let directory: String
    /// Called once if the record cannot be written (advertising goes on without it).
    public var failed: ((String) -> Void)?
    private var record: InstanceRecord
    private var reported = false

    public init(adapter: String, directory: String = InstanceRecord.directory()) {
        self.adapter = adapter
        self.directory = directory
        self.record = InstanceRecord(adapter: adapter, instances: [])
    }

    /// The adapter is back as `adapter` (another number): its instances went with it, so the
    /// old name's record goes, and the next ones are recorded under the new name.
    public func move(to adapter: String) {
        note([])
        self.adapter = adapter
        record = InstanceRecord(adapter: adapter, instances: [], kept: record.kept)
    }

    /// Records `instances` (with what each carries, where known) as ours now.
    public func note(_ instances: [UInt8], data: [UInt8: [UInt8]] = [:]) {
        record.instances = instances
        record.data = data.filter { instances.contains($0.key) }
        if instances.isEmpty {
            InstanceRecord.remove(path: record.path(in: directory))
            return
        }
        do {
            try record.save(in: directory)
        } catch {
            if !reported { failed?("cannot record the instances for `beacon-emit stop` in \(directory): \(error)") }
            reported = true
        }
    }

    /// At exit: with instances left (`--keep`, or an adapter that would not let them go), the
    /// record stays for `beacon-emit stop`, marked kept when asked for; else it goes.
    public func finish(remaining: [UInt8], kept: Bool) {
        record.kept = kept
        note(remaining, data: record.data)
    }

    /// Records `advertiser`'s instances (and what each carries) whenever they change, from its
    /// first add: a run killed at any moment after leaves a record.
    /// - Parameter failed: told once if the record cannot be written.
    public func follow(_ advertiser: some RecordedInstances, failed: @escaping (String) -> Void) {
        self.failed = failed
        advertiser.instancesChanged = { [weak advertiser] instances in
            self.note(instances, data: advertiser?.instanceData ?? [:])
        }
    }
}
