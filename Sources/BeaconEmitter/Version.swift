// SPDX-License-Identifier: GPL-2.0-or-later

/// What `beacon-emit --version` says. The release build (scripts/release-binary: packages,
/// tarballs, images, scripts/install) writes the version scripts/version reads from the git tag
/// vX.Y.Z into this line for its build and puts the line back after; a plain `swift build` says
/// it is a development build.
enum BuildVersion {
    static let text = "0.0.0-dev"
}
