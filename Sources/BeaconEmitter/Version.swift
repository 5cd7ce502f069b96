// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem

/// What `beacon-emit --version` says: a development build's "0.0.0-dev", or the version
/// scripts/version reads from the git tag vX.Y.Z, which the release build (scripts/release-binary:
/// packages, tarballs, images, scripts/install) writes into the linked binary's version field
/// (`CurrentProcess.buildVersion`): no source file changes under a build beside it.
enum BuildVersion {
    static var text: String { CurrentProcess.buildVersion }
}
