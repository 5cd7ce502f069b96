// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// One rule of an audit, judged.
public struct AuditRule: Sendable, Hashable {
    public enum Verdict: String, Sendable, Hashable {
        /// `inconclusive`: what was heard cannot judge the rule (too few reports, a source that
        /// does not say); a gate must not pass on it unless told to.
        case pass, warn, fail, inconclusive
    }

    /// Short name (`flags`, `interval`).
    public var name: String
    public var verdict: Verdict
    /// What was heard.
    public var seen: String
    /// What the specification or common practice wants.
    public var wanted: String
    /// Where the rule comes from.
    public var source: String
}
