// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconRig
import Foundation
import Testing

/// The scenario reader: what it takes, and each message it refuses a file with, at the
/// line and column of the offending value.
@Suite struct ScenarioParserTests {
    let parser = ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon)

    static let header = """
        scanner: peer
        beacons:
          lobby: {uuid: \(lobbyUUID), major: 1, minor: 2}
          door: {uuid: \(lobbyUUID), major: 1, minor: 3}
        regions:
          shop: {uuid: \(lobbyUUID), major: 1}

        """

    func parse(_ steps: String, header: String = header) throws(ScenarioError) -> Scenario {
        try parser.parse(header + "steps:\n" + steps)
    }

    /// `layouts:` names an app's android-beacon-library layouts; a beacon of one is
    /// `{layout: NAME, ids: [...], data: [...], measuredPower: P}`, built as the layout writes
    /// it; a name not declared, a layout refused, are refused where they stand.
    @Test func layoutsAreNamedOnceAndBuildTheirBeacons() throws {
        let configuration = """
            layouts:
              acme: 'm:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l,d:12-12'
            beacons:
              - {layout: acme, ids: [0x01020304, 258], data: [0x1234, 5], measuredPower: -70}
              - {layout: 's:0-1=feaa,m:2-2=00,p:3-3:-41,i:4-13,i:14-19', ids: [0x00112233445566778899, 0xaabbccddeeff], measuredPower: -59}

            """
        let beacons = try ScenarioParser(file: "lab.yaml").beaconList(configuration)
        #expect(beacons.map { HexText.format($0.advertisingData.bytes) } == [
            "0201060EFFFFFF7A010203040201BA341205", "0201060303AAFE1516AAFE00EE00112233445566778899AABBCCDDEEFF"])
        let scenario = try ScenarioParser(file: "lab.yaml").parse("""
            layouts: {acme: 'm:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l,d:12-12'}
            beacons:
              tag: {layout: acme, ids: [0x01020304, 258], data: [0x1234, 5], measuredPower: -70}
            steps:
              - advertise: tag

            """)
        #expect(scenario.beacons.first.map { HexText.format($0.beacon.advertisingData.bytes) } == "0201060EFFFFFF7A010203040201BA341205")
        for (text, place, message) in [
            (configuration.replacingOccurrences(of: "layout: acme", with: "layout: acmee"), "lab.yaml:4:14: ", "no layout named 'acmee'"),
            (configuration.replacingOccurrences(of: "i:7-8l,p:9-9", with: "i:7-8l,q:9-9"), "lab.yaml:2:9: ", "layout 'acme': term 'q:9-9'"),
            (configuration.replacingOccurrences(of: "ids: [0x01020304, 258]", with: "ids: [0x01020304]"), "lab.yaml:4:",
             "it has 2 identifiers (i:), 1 --id given"),
        ] {
            #expect { _ = try ScenarioParser(file: "lab.yaml").beaconList(text) } throws: { error in
                "\(error)".hasPrefix(place) && "\(error)".contains(message)
            }
        }
    }

    /// A region of a layout (`{layout: NAME, ids: [...]}`): the beacons whose identifiers start
    /// with those given are in it (fewer, a wider region), others of the layout and other
    /// formats are not; a layout's region with a UUID, ids without a layout, more ids than the
    /// layout has, are refused where they stand.
    @Test func aLayoutsRegionHoldsTheBeaconsItsIdentifiersStart() throws {
        let text = """
            layouts: {acme: 'm:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11l'}
            scanner: peer
            beacons:
              shelf: {layout: acme, ids: [0x01020304, 7], data: [300], measuredPower: -62}
              sibling: {layout: acme, ids: [0x01020304, 8], data: [300], measuredPower: -62}
              other: {layout: acme, ids: [0x0A0B0C0D, 7], data: [1], measuredPower: -62}
              lobby: {uuid: \(lobbyUUID), major: 1, minor: 2}
            regions:
              aisle: {layout: acme, ids: [0x01020304]}
              spot: {layout: acme, ids: [0x01020304, 7]}
              any: {layout: 'm:2-2=7a,i:3-6,i:7-8l,p:9-9,d:10-11'}
            steps:
              - advertise: shelf

            """
        let scenario = try ScenarioParser(file: "lab.yaml").parse(text)
        func members(_ region: String) -> [String] {
            guard let definition = scenario.regions.first(where: { $0.name == region }) else { return [] }
            return scenario.beacons.filter { definition.contains($0.beacon) }.map(\.name)
        }
        #expect(members("aisle") == ["shelf", "sibling"])
        #expect(members("spot") == ["shelf"])
        #expect(members("any") == ["shelf", "sibling", "other"])
        #expect(scenario.regions.first?.layout?.name == "acme")
        #expect(scenario.regions.last?.layout?.name == "layout")
        // A report's data: the bytes the layout writes, read as the app's parser does.
        let aisle = try #require(scenario.regions.first)
        #expect(aisle.contains(scenario.beacons[0].beacon.advertisingData.bytes, beacons: []))
        #expect(!aisle.contains(scenario.beacons[2].beacon.advertisingData.bytes, beacons: [scenario.beacons[2].beacon]))
        for (from, to, place, message) in [
            ("aisle: {layout: acme, ids: [0x01020304]}", "aisle: {layout: acme, uuid: \(lobbyUUID)}",
             "lab.yaml:9:", "a layout's region names its identifiers with 'ids', not 'uuid'"),
            ("aisle: {layout: acme, ids: [0x01020304]}", "aisle: {uuid: \(lobbyUUID), ids: [1]}",
             "lab.yaml:9:", "'ids' go with a 'layout'"),
            ("spot: {layout: acme, ids: [0x01020304, 7]}", "spot: {layout: acme, ids: [0x01020304, 7, 9]}",
             "lab.yaml:10:", "region 'spot': the layout has 2 identifiers, 3 given"),
            ("aisle: {layout: acme,", "aisle: {layout: acmee,", "lab.yaml:9:", "no layout named 'acmee'"),
        ] {
            #expect { _ = try ScenarioParser(file: "lab.yaml").parse(text.replacingOccurrences(of: from, with: to)) } throws: { error in
                "\(error)".hasPrefix(place) && "\(error)".contains(message)
            }
        }
    }

    /// An identity key given inline in an update step: refused where the file is readable by
    /// others (as in a beacon's fields), never shown in the step's text where it is not, and
    /// a wrong one's error does not echo it.
    @Test func anInlineKeyInAnUpdateIsNeitherExposedNorShown() throws {
        let key = "00112233445566778899aabbccddeeff"
        let text = """
            scanner: peer
            beacons:
              tag: {type: eddystone-eid, identity-key: \(key), rotation-exponent: 10, clock: 1000}
            steps:
              - advertise: tag
              - update: {beacon: tag, identity-key: KEY}

            """
        #expect { try ScenarioParser(file: "open.yaml", mode: 0o644).parse(text.replacingOccurrences(of: "KEY", with: key)) }
            throws: { "\($0)".contains("open.yaml:3:") && "\($0)".contains("an identity key in a file other users can read") }
        let own = try ScenarioParser(file: "own.yaml", mode: 0o600).parse(
            text.replacingOccurrences(of: "KEY", with: "ffeeddccbbaa99887766554433221100"))
        let texts = own.steps.map { ScenarioRunner.text($0.action) }
        #expect(texts.last == "update tag: identity-key=(secret)", "\(texts)")
        #expect { try ScenarioParser(file: "own.yaml", mode: 0o600).parse(text.replacingOccurrences(of: "KEY", with: "ffeeddccbbaa998877665544"))
        } throws: { error in
            "\(error)".contains("own.yaml:6:") && !"\(error)".contains("ffeeddccbbaa998877665544")
        }
    }

    /// A range for major or minor makes a crowd: a beacon per value named NAME-VALUE, the
    /// crowd's name in advertise and stop standing for them all; elsewhere a member is named.
    @Test func aCrowdIsItsMembers() throws {
        let header = """
            beacons:
              room: {uuid: \(lobbyUUID), major: 5, minor: 3-6, interval: 200}
              door: {uuid: \(lobbyUUID), major: 6, minor: 1}

            """
        let scenario = try parse("""
              - advertise: [room, door]
              - update: {beacon: room-4, minor: 40}
              - stop: room

            """, header: header)
        #expect(scenario.crowds["room"] == ["room-3", "room-4", "room-5", "room-6"])
        #expect(scenario.beacons.map(\.name) == ["room-3", "room-4", "room-5", "room-6", "door"])
        #expect(scenario.beacon(named: "room-5")?.parameters == BeaconParameters(intervalUnits: 320))
        guard case let .iBeacon(member)? = scenario.beacon(named: "room-6")?.beacon else { Issue.record("not an iBeacon"); return }
        #expect(member.major == 5 && member.minor == 6)
        guard case let .advertise(names) = scenario.steps[0].action, case let .stop(stopped) = scenario.steps[2].action else {
            Issue.record("\(scenario.steps)")
            return
        }
        #expect(names == ["room-3", "room-4", "room-5", "room-6", "door"] && stopped == ["room-3", "room-4", "room-5", "room-6"])
        #expect { try parse("  - update: {beacon: room, minor: 1}\n", header: header) } throws: {
            "\($0)".contains("'room' is a crowd of 4: name one of its beacons (room-3 to room-6)")
        }
        #expect { try parse("  - advertise: room\n", header: header.replacingOccurrences(of: "3-6", with: "1-300")) } throws: {
            "\($0)".contains("at most 256")
        }
        #expect { try parse("  - advertise: room\n", header: header.replacingOccurrences(of: "door:", with: "room-4:")) } throws: {
            "\($0)".contains("the name of another beacon")
        }
    }

    /// Repeats within repeats, 19 deep (as deep as the 64 levels of YAML allow; each level's
    /// block walked twice, as the check once did, is 2^19 walks: minutes): checked in a walk or
    /// two per level, and still refused where a later pass finds a mistake (a beacon advertised
    /// twice in the second round).
    @Test func nestedRepeatsAreCheckedInLinearTime() throws {
        func nested(_ depth: Int, _ innermost: String) -> String {
            var text = ""
            for level in 0..<depth {
                let pad = String(repeating: " ", count: level * 4)
                text += "\(pad)  - repeat:\n\(pad)      times: 2\n\(pad)      steps:\n"
            }
            let pad = String(repeating: " ", count: depth * 4)
            return text + innermost.split(separator: "\n").map { "\(pad)  \($0)\n" }.joined()
        }
        let started = ContinuousClock.now
        let scenario = try parse("  - advertise: lobby\n" + nested(19, "- update: {beacon: lobby, minor: 9}\n- wait: 0.01"))
        #expect(scenario.steps.count == 2)
        #expect(started.duration(to: .now) < .seconds(5), "\(started.duration(to: .now))")
        #expect { try parse(nested(19, "- advertise: lobby")) } throws: { "\($0)".contains("'lobby' is already on the air here") }
    }

    @Test func everyStepKindIsRead() throws {
        let scenario = try parse("""
              - advertise: lobby
              - advertise: [door]
              - wait: 1.5
              - expect: {seen: lobby, within: 3}
              - update: {beacon: lobby, minor: 9}
              - expect: {notSeen: door, for: 2}
              - expect: {region: shop, state: inside, within: 1}
              - expect: {region: shop, event: exit, within: 40}
              - ramp: {beacon: lobby, from: 0, to: -20, step: 5, every: 0.5}
              - repeat:
                  times: 3
                  steps:
                    - stop: door
                    - advertise: door
              - stop: all

            """)
        #expect(scenario.beacons.map(\.name) == ["lobby", "door"])
        #expect(scenario.beacons[0].beacon == .iBeacon(IBeacon(proximityUUID: .init(uuidString: lobbyUUID)!, major: 1, minor: 2)))
        #expect(scenario.regions.first?.region == BeaconRegion(uuid: .init(uuidString: lobbyUUID)!, major: 1))
        #expect(scenario.scanner == "peer")
        #expect(scenario.intervalUnits == 160)
        let texts = scenario.steps.map { ScenarioRunner.text($0.action) }
        #expect(texts == ["advertise lobby", "advertise door", "wait 1.5 s", "expect lobby seen within 3 s",
                          "update lobby: minor=9", "expect door not seen for 2 s", "expect region shop inside within 1 s",
                          "expect region shop exit event within 40 s",
                          "ramp lobby TX power 0 to -20 dBm, 5 dB every 0.5 s", "repeat 3 times (2 steps)", "stop all"])
        // Each step where its item starts: the header is 6 lines, then "steps:".
        #expect(scenario.steps.map(\.place.line) == [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 22])
        #expect(scenario.steps[0].place.column == 5)
    }

    @Test func jsonIsReadToo() throws {
        let scenario = try parser.parse("""
            {"interval": 250, "beacons": {"a": {"uuid": "\(lobbyUUID)", "major": 1, "minor": 2}},
             "steps": [{"advertise": ["a"]}, {"wait": 2}, {"stop": "all"}]}
            """)
        #expect(scenario.intervalUnits == 400)
        #expect(scenario.steps.count == 3)
        #expect(scenario.scanner == nil)
    }

    /// (steps, message, line, column); the header takes lines 1-6 and "steps:" line 7.
    static let refusals: [(String, String, Int, Int)] = [
        ("  - advertise: hall\n", "no beacon named 'hall' (declare it under 'beacons'); there are: lobby, door", 8, 16),
        ("  - advertise: lobby\n  - advertise: lobby\n", "'lobby' is already on the air here", 9, 5),
        ("  - stop: door\n", "'door' is not on the air here", 8, 5),
        ("  - advertise: [lobby, lobby]\n", "'lobby' is named twice", 8, 24),
        ("  - wait: soon\n", "wait (seconds) must be a number, got 'soon'", 8, 11),
        ("  - wait: -1\n", "wait must be from 0 to 86400 seconds, got -1.0", 8, 11),
        ("  - sleep: 1\n", "unknown key 'sleep' in a step: expected one of advertise, update, stop, wait, expect, repeat, ramp", 8, 5),
        ("  - {wait: 1, stop: all}\n", "a step has exactly one of advertise, update, stop, wait, expect, repeat, ramp, replay; got wait and stop", 8, 5),
        ("  - expect: {seen: lobby}\n", "expect seen needs 'within: SECONDS'", 8, 13),
        ("  - expect: {seen: lobby, for: 2}\n", "expect seen takes seen and within, not 'for'", 8, 13),
        ("  - expect: {lobby: seen}\n", "unknown key 'lobby' in expect: expected one of seen, notSeen, phone, region, state, event, noEvent, within, for", 8, 14),
        ("  - expect: {region: mall, state: inside, within: 1}\n", "no region named 'mall' (declare it under 'regions'); there are: shop", 8, 22),
        ("  - expect: {region: shop, state: near, within: 1}\n", "state must be inside or outside, got 'near'", 8, 35),
        ("  - expect: {region: shop, within: 1}\n", "expect region needs one of 'state: inside|outside' or 'event: enter|exit'", 8, 13),
        ("  - update: {beacon: lobby}\n", "update of 'lobby' changes no field (give e.g. minor: 3)", 8, 13),
        ("  - update: {beacon: lobby, minor: 70000}\n", "update of 'lobby': major and minor must be from 0 to 65535", 8, 5),
        ("  - repeat: {times: 0, steps: [{wait: 1}]}\n", "times must be from 1 to 100000, got 0", 8, 21),
        ("  - repeat: {times: 2}\n", "repeat needs 'times: N' and 'steps: [...]'", 8, 13),
        ("  - ramp: {beacon: lobby, from: 0, to: -20}\n", "ramp: 'lobby' is not on the air here", 8, 5),
        ("  - advertise: lobby\n  - ramp: {beacon: lobby, from: 0, to: 30}\n", "TX power must be from -127 to 20 dBm, got 30", 9, 40),
        ("  - advertise: lobby\n  - ramp: {beacon: lobby, from: 0, to: -9, step: 0}\n", "step must be a positive number of dB, got 0", 9, 50),
        ("  - wait: [1, 2]\n", "wait (seconds) must be a single value, not a list or map", 8, 11),
        ("  advertise: lobby\n", "'steps' must be a list (each item '- advertise: NAME', '- wait: SECONDS', ...)", 8, 3),
        ("  - wait: 1\n    - wait: 2\n", "not valid YAML or JSON: ", 9, 5),
    ]

    static let hostsHeader = """
        hosts:
          lobby: {ssh: beacon@pi-lobby, control: /run/beacon-emit-lobby/control, sshOptions: [-p, '2222']}
          hall: {ssh: pi-hall, control: /run/beacon-emit-hall/control, command: /usr/local/bin/beacon-emit}

        """

    /// A scenario is code: each host's ssh session, and every ssh option that runs or loads
    /// something on this machine, with the place the file says so.
    @Test func whatAScenarioRunsHereIsNamedWithItsPlace() throws {
        var parser = parser
        parser.allowsAnySSHOption = true  // run --allow-ssh-options
        let scenario = try parser.parse("""
            hosts:
              lobby: {ssh: beacon@pi-lobby, control: /run/beacon-emit-lobby/control, sshOptions: [-i, /k, -oProxyCommand=nc %h %p]}
              hall: {ssh: pi-hall, control: /run/hall, sshOptions: [-o, 'LocalCommand touch /tmp/x', -F, lab.conf]}
            beacons:
              door: {uuid: \(lobbyUUID), major: 1, minor: 3}
            steps:
              - advertise: door
            """)
        let lines = scenario.localPrograms.map { "\($0.place.map { "\($0.line):\($0.column)" } ?? "-") \($0)" }
        #expect(lines.count == 5, "\(lines)")
        #expect(lines.first?.hasPrefix("2:16 host 'lobby': runs ssh -T -o BatchMode=yes") == true, "\(lines)")
        #expect(lines.first?.hasSuffix("-i /k '-oProxyCommand=nc %h %p' -- beacon@pi-lobby "
                                       + "'beacon-emit control '\\''/run/beacon-emit-lobby/control'\\'' --session'") == true, "\(lines)")
        #expect(lines.contains("2:95 host 'lobby': -o ProxyCommand: ssh runs the command 'nc %h %p' on this machine"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("3:15 host 'hall': runs ssh") }, "\(lines)")
        #expect(lines.contains("3:61 host 'hall': -o LocalCommand: ssh runs the command (with PermitLocalCommand=yes) 'touch /tmp/x' on this machine"),
                "\(lines)")
        #expect(lines.contains("3:94 host 'hall': -F: ssh reads the configuration file 'lab.conf', which may run any command"), "\(lines)")
    }

    /// Without `run --allow-ssh-options` a host's ssh options come from an allow-list; anything
    /// else is refused at its place, in whatever spelling ssh would take it.
    @Test func sshOptionsOutsideTheAllowListAreRefused() throws {
        #expect(SSHOptionPolicy.firstRefused(["-i", "/k", "-p", "2222", "-l", "pi", "-oPort=22", "-o", "User pi", "-o",
                                              "identitiesonly=yes", "-o", "ConnectTimeout=5", "-o", "ServerAliveInterval=2",
                                              "-iother", "-o", "ServerAliveCountMax 3"]) == nil)
        for (options, index) in [(["-oProxyCommand=nc %h %p"], 0), (["-ToProxyCommand=x"], 0), (["-o", "\"ProxyCommand\" x"], 1),
                                 (["-o", "LocalCommand=x"], 1), (["-F", "lab.conf"], 0), (["-I", "/lib.so"], 0), (["-v"], 0),
                                 (["-i"], 0), (["-p", "22", "-o", "User=x\nProxyCommand=y"], 3), (["--", "x"], 0),
                                 (["-o", "ControlPath=/tmp/%r", "-i", "/k"], 1), (["-o", "Include x"], 1)] {
            #expect(SSHOptionPolicy.firstRefused(options)?.index == index, "\(options)")
        }
        let refused = try #require(refusal(scenario: """
            hosts:
              lobby: {ssh: beacon@pi-lobby, control: /run/lobby, sshOptions: [-i, /k, '-oProxyCommand=sh -c id']}
            beacons:
              door: {host: lobby, uuid: \(lobbyUUID), major: 1, minor: 3}
            steps:
              - advertise: door
            """))
        #expect(refused.description.hasPrefix("rig.yaml:2:75: host 'lobby': the ssh option '-oProxyCommand=sh -c id' is not one "
                                              + "a scenario may give"), "\(refused)")
        #expect(refused.message.contains("`run --allow-ssh-options` runs the file's options as they are"), "\(refused)")
    }

    private func refusal(scenario text: String) -> ScenarioError? {
        do {
            _ = try ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon).parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func sshOptionsThatRunNothingHereAreNotNamed() {
        #expect(SSHOptionReview.findings(["-i", "/k", "-p", "2222", "-o", "BatchMode=yes", "-oPort=22", "-F", "none", "-v"]).isEmpty)
        // Each spelling ssh takes: the keyword in any case, "=" or a space, the flag's value attached or next.
        for options in [["-o", "proxycommand=x"], ["-oProxyCommand x"], ["-o", " KnownHostsCommand=x"], ["-I", "/lib.so"],
                        ["-Fother.conf"], ["-o", "PKCS11Provider=/lib.so"], ["-o", "Include other.conf"]] {
            #expect(SSHOptionReview.findings(options).count == 1, "\(options)")
        }
        // The option after an option's value is read as an option.
        #expect(SSHOptionReview.findings(["-o", "User=x", "-o", "ProxyCommand=y"]).map(\.index) == [3])
    }

    @Test func hostsAndEachBeaconsHostAreRead() throws {
        let scenario = try parse("  - advertise: [lobby, door]\n", header: Self.hostsHeader + """
            beacons:
              lobby: {uuid: \(lobbyUUID), major: 1, minor: 2, host: lobby}
              door: {uuid: \(lobbyUUID), major: 1, minor: 3}

            """)
        #expect(scenario.hosts == [
            Scenario.HostDefinition(name: "lobby", destination: "beacon@pi-lobby", controlPath: "/run/beacon-emit-lobby/control",
                                    sshOptions: ["-p", "2222"]),
            Scenario.HostDefinition(name: "hall", destination: "pi-hall", controlPath: "/run/beacon-emit-hall/control",
                                    command: "/usr/local/bin/beacon-emit"),
        ])
        // The host is no beacon field: the factory never sees it.
        #expect(scenario.beacon(named: "lobby")?.host == "lobby")
        #expect(scenario.beacon(named: "lobby")?.fields["host"] == nil)
        #expect(scenario.beacon(named: "door")?.host == nil)
        #expect(scenario.beaconHosts == ["lobby": "lobby"])
        #expect(scenario.hasLocalBeacons)
    }

    static let hostRefusals: [(String, String, String, Int, Int)] = [
        ("hosts: {lobby: {ssh: '-oProxyCommand=x', control: /run/c}}\n", "",
         "host 'lobby': ssh must be a destination such as beacon@pi-lobby, got '-oProxyCommand=x' (options go in 'sshOptions')", 1, 22),
        ("hosts: {lobby: {ssh: pi, control: run/c}}\n", "", "host 'lobby': control must be the socket's absolute path on the box, got 'run/c'", 1, 35),
        ("hosts: {lobby: {ssh: pi}}\n", "", "host 'lobby' needs 'ssh: [USER@]HOST' and 'control: PATH'", 1, 16),
        ("hosts: {lobby: {ssh: pi, control: /c, port: 22}}\n", "", "unknown key 'port' in host 'lobby': expected one of ssh, control, sshOptions, command", 1, 39),
        ("hosts: {lobby: {ssh: pi, control: /c, sshOptions: -p 22}}\n", "", "host 'lobby': sshOptions must be a list of arguments", 1, 51),
        ("hosts: {lobby: {ssh: pi, control: /c}}\n", ", host: hall", "beacon 'a': no host named 'hall' (declare it under 'hosts'); there are: lobby", 2, 85),
        ("hosts: {lobby: {ssh: pi, control: /c}}\n", ", host: lobby", "ramp: 'a' is on host lobby, whose control socket changes beacons, not TX power", 3, 25),
    ]

    @Test(arguments: hostRefusals)
    func aHostMistakeIsRefusedWhereItStands(hosts: String, beaconKeys: String, message: String, line: Int, column: Int) {
        expectRefusal(hosts + "beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2\(beaconKeys)}}\n"
                      + "steps: [{advertise: a}, {ramp: {beacon: a, from: 0, to: -4}}]\n",
                      message: message, line: line, column: column)
    }

    /// The whole file `text` is refused with a message that begins with `message`, at the place given.
    func expectRefusal(_ text: String, message: String, line: Int, column: Int) {
        do {
            _ = try parser.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.place == Scenario.Place(line: line, column: column), "\(error)")
        }
    }

    @Test(arguments: refusals)
    func aRefusalNamesThePlaceAndWhatWasExpected(steps: String, message: String, line: Int, column: Int) {
        do {
            _ = try parse(steps)
            Issue.record("accepted: \(steps)")
        } catch {
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.place == Scenario.Place(line: line, column: column), "\(error)")
            #expect(error.description.hasPrefix("rig.yaml:\(line):\(column): "))
        }
    }

    static let topLevelRefusals: [(String, String)] = [
        ("", "the file is empty: expected a map with 'beacons' and 'steps'"),
        ("beacons: {}\nsteps: [{wait: 1}]\n", "'beacons' is empty: name at least one beacon"),
        ("steps: [{wait: 1}]\n", "expected 'beacons': a map of names to beacon fields"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\n", "expected 'steps': a list of steps"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nsteps: []\n", "'steps' is empty"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nsteps: [{wait: 1}]\ndevices: x\n",
         "unknown key 'devices' in the scenario: expected one of device, scanner, interval, exitAfter, rotation, hosts, beacons, regions, phones, steps"),
        ("beacons: {a: {uuid: nope, major: 1, minor: 2}}\nsteps: [{wait: 1}]\n", "beacon 'a': needs a uuid"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nsteps: [{expect: {seen: a, within: 1}}]\n",
         "the steps expect what is seen, so the scenario needs 'scanner:'"),
        ("interval: 5\nbeacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nsteps: [{wait: 1}]\n",
         "interval must be from 20 to 10485759 ms (extended advertising), got 5.0"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nregions: {r: {major: 1}}\nsteps: [{wait: 1}]\n",
         "region 'r' needs 'uuid'"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nregions: {r: {uuid: \(lobbyUUID), majr: 1}}\nsteps: [{wait: 1}]\n",
         "unknown key 'majr' in region 'r': expected one of uuid, major, minor"),
        ("beacons: {a: {uuid: \(lobbyUUID), major: 1, minor: 2}}\nregions: {r: {uuid: \(lobbyUUID), minor: 1}}\nsteps: [{wait: 1}]\n",
         "region 'r': minor needs major"),
        ("beacons: [a, b]\nsteps: [{wait: 1}]\n", "beacons must be a map"),
    ]

    /// A beacon's bad field is reported at its value (it was at the beacon's map), and a number
    /// written as a string in JSON is refused there.
    static let fieldRefusals: [(String, String, Int, Int)] = [
        ("beacons:\n  a:\n    uuid: \(lobbyUUID)\n    major: 1\n    minor: 70000\nsteps: [{wait: 1}]\n",
         "beacon 'a': major and minor must be from 0 to 65535", 4, 12),
        ("beacons:\n  a: {uuid: nope, major: 1, minor: 2}\nsteps: [{wait: 1}]\n", "beacon 'a': needs a uuid", 2, 13),
        ("{\"beacons\": {\"a\": {\"uuid\": \"\(lobbyUUID)\", \"major\": \"7\", \"minor\": 2}},\n \"steps\": [{\"wait\": 1}]}\n",
         "beacon 'a': major must be a number from 0 to 65535, got the string \"7\" (write it without quotes)", 1, 77),
        ("beacons:\n  a: {uuid: \(lobbyUUID), major: 1, minor: 2}\nsteps:\n  - advertise: a\n  - update: {beacon: a, minor: seven}\n",
         "update of 'a': minor must be a number from 0 to 65535, got 'seven'", 5, 32),
        ("beacons:\n  a: {uuid: \(lobbyUUID), major: 1, minor: 2, interval: 5}\nsteps: [{wait: 1}]\n",
         "beacon 'a': interval must be from 20 to 10485759 ms (extended advertising), got '5'", 2, 81),
        ("beacons:\n  a: {uuid: \(lobbyUUID), major: 1, minor: 2, txPower: 30}\nsteps: [{wait: 1}]\n",
         "beacon 'a': txPower must be from -127 to 20 (dBm), got '30'", 2, 80),
        ("beacons:\n  a: {uuid: \(lobbyUUID), major: 1, minor: 2}\nsteps:\n  - advertise: a\n  - update: {beacon: a, interval: 5}\n",
         "update of 'a': interval must be from 20 to 10485759 ms", 5, 5),
    ]

    /// A beacon's own interval and TX power are read apart from its data fields, and refused
    /// for a beacon on another box (whose emitter's options apply there).
    @Test func aBeaconsOwnParametersAreRead() throws {
        let scenario = try parser.parse("""
            beacons:
              a: {uuid: \(lobbyUUID), major: 1, minor: 2, interval: 500, txPower: -8}
              b: {uuid: \(lobbyUUID), major: 1, minor: 3}
            steps:
              - advertise: [a, b]
              - update: {beacon: b, tx-power: 4}

            """)
        #expect(scenario.beacon(named: "a")?.parameters == BeaconParameters(intervalUnits: 800, txPower: -8))
        #expect(scenario.beacon(named: "b")?.parameters == .run)
        let data = try testBeacon(["uuid": lobbyUUID, "major": "1", "minor": "2"])
        #expect(scenario.beacon(named: "a")?.beacon == data, "built from its data fields alone")
        // A beacon on a box has its own parameters too: its box's control socket takes them.
        let hosted = try parser.parse("""
            hosts:
              room2: {ssh: pi-room2, control: /run/beacon-emit/control}
            beacons:
              a: {uuid: \(lobbyUUID), major: 1, minor: 2, interval: 500, phy: coded, host: room2}
            steps: [{advertise: a}, {update: {beacon: a, tx-power: -4}}]

            """)
        #expect(hosted.beacon(named: "a")?.parameters == BeaconParameters(intervalUnits: 800, phy: .coded))
    }

    @Test(arguments: fieldRefusals)
    func aBeaconsBadFieldIsReportedAtItsValue(text: String, message: String, line: Int, column: Int) {
        expectRefusal(text, message: message, line: line, column: column)
    }

    @Test(arguments: topLevelRefusals)
    func aWholeFileRefusalSaysWhatWasExpected(text: String, message: String) {
        do {
            _ = try parser.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.message.hasPrefix(message), "\(error)")
        }
    }

    /// An update inside a repeat is checked on the second round too, when earlier updates of
    /// the round before have changed the fields.
    @Test func updatesInARepeatAreCheckedOverTwoRounds() throws {
        _ = try parse("""
              - advertise: lobby
              - repeat: {times: 5, steps: [{update: {beacon: lobby, minor: 1}}, {update: {beacon: lobby, major: 2}}]}

            """)
    }

    @Test func aMissingFileIsNamed() {
        do {
            _ = try ScenarioParser.load(path: "/nonexistent/rig.yaml", makeBeacon: testBeacon)
            Issue.record("loaded")
        } catch {
            #expect(error.description == "/nonexistent/rig.yaml: cannot read the file: No such file or directory")
            #expect(error.unreadable, "an I/O failure (74), not a mistake in the file (65)")
        }
    }
}

/// A configuration file's beacon list (`--config`, a service's file), read as a scenario is:
/// each mistake at its line and column, and no file big or aliased enough to cost more than
/// a few MB.
@Suite struct ConfigurationFileTests {
    let parser = ScenarioParser(file: "lobby.yaml", makeBeacon: testBeacon)

    func refusal(_ text: String) -> ScenarioError? {
        do {
            _ = try parser.beaconList(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func aListOfBeaconsIsRead() throws {
        let beacons = try parser.beaconList("""
            beacons:
              - {uuid: \(lobbyUUID), major: 1, minor: 2}
              - uuid: \(lobbyUUID)
                major: 1
                minor: 3
            """)
        #expect(beacons.count == 2)
        let json = try parser.beaconList("{\"beacons\": [{\"uuid\": \"\(lobbyUUID)\", \"major\": 1, \"minor\": 2}]}")
        #expect(json.count == 1)
    }

    /// A configuration file's beacon with its own parameters: read apart from its data; a
    /// rotation of a fixed address refused.
    @Test func aListedBeaconsOwnParametersAreRead() throws {
        let entries = try parser.beaconEntries("""
            beacons:
              - {uuid: \(lobbyUUID), major: 1, minor: 2, interval: 152.5, tx-power: -20}
              - {uuid: \(lobbyUUID), major: 1, minor: 3}
            """)
        #expect(entries.map(\.parameters) == [BeaconParameters(intervalUnits: 244, txPower: -20), .run])
        #expect(entries.map(\.beacon) == (try parser.beaconList("""
            beacons:
              - {uuid: \(lobbyUUID), major: 1, minor: 2}
              - {uuid: \(lobbyUUID), major: 1, minor: 3}
            """)))
        #expect(throws: ScenarioError.self) {
            try parser.beaconEntries("beacons:\n  - {uuid: \(lobbyUUID), major: 1, minor: 2, rotateAddress: 10, address: C0:11:22:33:44:55}\n")
        }
        // A phone-visible legacy beacon beside a long-range connectable one.
        let mixed = try parser.beaconEntries("""
            beacons:
              - {uuid: \(lobbyUUID), major: 1, minor: 2, phy: 1m}
              - {uuid: \(lobbyUUID), major: 1, minor: 3, phy: coded, connectable: true}
            """)
        #expect(mixed.map(\.parameters) == [BeaconParameters(phy: .le1M), BeaconParameters(phy: .coded, connectable: true)])
        #expect(throws: ScenarioError.self) { try parser.beaconEntries("beacons:\n  - {uuid: \(lobbyUUID), phy: 2m}\n") }
    }

    static let uuid = "uuid: 39ED98FF-2900-441A-802F-9C398FC199D2"

    /// Each mistake, the line it is on and the text it is reported at (its column found there).
    @Test(arguments: [
        ("beacons:\n  - {\(uuid), major: 1, minor: seven}\n", 2, "seven", "beacon 1: minor must be a number from 0 to 65535, got 'seven'"),
        ("beacons:\n  - {\(uuid), major: \"7\", minor: 2}\n", 2, "\"7\"", "beacon 1: major must be a number from 0 to 65535, got the string \"7\""),
        ("beacons:\n  - {\(uuid), major: 1, minor: 2}\ncolour: red\n", 3, "colour", "unknown key 'colour' in the configuration: expected one of beacons"),
        ("beacons: {lobby: {\(uuid)}}\n", 1, "{lobby", "'beacons' must be a list of beacons"),
        ("beacons: []\n", 1, "[]", "'beacons' is empty"),
        ("beacons:\n  - [1, 2]\n", 2, "[1, 2]", "beacon 1 must be a map"),
        ("beacons:\n  - {\(uuid), major: 1, minor: 2, minor: 3}\n", 2, "minor: 3", "'minor' is given twice in beacon 1"),
        ("beacons:\n  - {\(uuid), major: [1]}\n", 2, "[1]", "beacon 1: major must be a single value"),
    ])
    func eachMistakeAtItsPlace(text: String, line: Int, at needle: String, message: String) throws {
        let error = try #require(refusal(text))
        let lineText = text.split(separator: "\n", omittingEmptySubsequences: false)[line - 1]
        let column = try #require(lineText.range(of: needle)).lowerBound.utf16Offset(in: lineText) + 1
        #expect(error.place == Scenario.Place(line: line, column: column), "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.description.hasPrefix("lobby.yaml:\(line):\(column): "), "\(error)")
    }

    @Test func notYAMLIsReportedWhereTheParserStopped() throws {
        let error = try #require(refusal("beacons: [\n"))
        #expect(error.place?.line == 2, "\(error)")
        #expect(error.message.hasPrefix("not valid YAML or JSON"), "\(error)")
    }

    @Test func anAliasBombIsRefusedAtOnceAndCheaply() {
        // Eight levels of ten: 10^9 values once the aliases are followed, in 600 bytes.
        var lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...8 {
            lines.append("a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]")
        }
        lines.append("beacons:\n  - {uuid: \(lobbyUUID), major: 1, minor: *a8}")
        let started = ContinuousClock.now
        let error = refusal(lines.joined(separator: "\n"))
        #expect(error?.message.contains("more than \(ScenarioParser.maximumValues) values once its aliases") == true,
                "\(String(describing: error))")
        #expect(started.duration(to: .now) < .seconds(5), "bounded by the count, not by the expansion")
        // The scenario reader counts the same way.
        #expect(throws: ScenarioError.self) {
            _ = try ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon).parse(lines.joined(separator: "\n") + "\nsteps: []")
        }
    }

    @Test func nestingIsBoundedBeforeTheTreeIsBuilt() {
        // Flow lists, block lists written compactly, flow maps: each 5,000 deep in a few KB
        // (composing any of them overflowed the stack), each refused where it passes 64.
        let deep = 5000
        for (text, place) in [("beacons: " + String(repeating: "[", count: deep) + String(repeating: "]", count: deep), "1:73"),
                              ("beacons:\n" + String(repeating: "- ", count: deep) + "x", "2:127"),
                              ("beacons: " + String(repeating: "{a: ", count: deep) + "1" + String(repeating: "}", count: deep),
                               "1:262")] {
            let error = refusal(text)
            #expect(error?.description == "lobby.yaml:\(place): lists and maps nest more than 64 deep here: refused "
                    + "(a beacon list needs 3 levels, a scenario 6)", "\(String(describing: error))")
            #expect(throws: ScenarioError.self) {
                _ = try ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon).parse(text + "\nsteps: []")
            }
        }
        // 64 deep is read (and refused for what it is, not for its depth).
        let within = refusal("beacons: " + String(repeating: "[", count: 63) + "x" + String(repeating: "]", count: 63))
        #expect(error(within, lacks: "nest more than"))
        // Aliases: each anchored list is 40 deep, the file 41; followed, they nest 81 deep.
        let aliased = "a: &a " + String(repeating: "[", count: 40) + "x" + String(repeating: "]", count: 40)
            + "\nb: &b " + String(repeating: "[", count: 40) + "*a" + String(repeating: "]", count: 40) + "\nbeacons: [*b]"
        #expect(refusal(aliased)?.message.hasSuffix("nest more than 64 deep here once its aliases (*name) are followed: "
                                                   + "refused (a beacon list needs 3 levels, a scenario 6)") == true)
    }

    /// A chain of aliases, each anchor a list holding the one before: 2 levels deep as written,
    /// 50,000 once composed (freeing that tree overflowed the stack: exit 139). Measured on the
    /// parser's events, it is refused where it passes 64, in a configuration and a scenario alike,
    /// and nothing is composed.
    @Test func anAliasChainIsRefusedWhereItPasses64() {
        let chain = "beacons:\n  - &a [0]\n" + String(repeating: "  - &a [*a]\n", count: 50_000)
        #expect(chain.utf8.count < ScenarioParser.maximumFileSize)
        let started = ContinuousClock.now
        let refused = refusal(chain)
        #expect(refused?.description == "lobby.yaml:64:9: lists and maps nest more than 64 deep here once its aliases (*name) "
                + "are followed: refused (a beacon list needs 3 levels, a scenario 6)", "\(String(describing: refused))")
        #expect(started.duration(to: .now) < .seconds(5), "linear in the file")
        #expect(throws: ScenarioError.self) {
            _ = try ScenarioParser(file: "rig.yaml", makeBeacon: testBeacon).parse(chain + "steps: []\n")
        }
        // 60 links deep is composed, and refused for what it is.
        let short = "beacons:\n  - &a [0]\n" + String(repeating: "  - &a [*a]\n", count: 60)
        #expect(error(refusal(short), lacks: "nest more than"))
        // An anchor defined again stands for its new value from there on, as composing reads it.
        let redefined = "x: &a [[[[0]]]]\ny: &a 1\nbeacons:\n" + String(repeating: "  - [*a]\n", count: 3)
        #expect(error(refusal(redefined), lacks: "nest more than"))
    }

    /// Values are counted on the parser's events too: 524,288 scalars in 1 MiB are refused
    /// before a tree of them is built (composing them first peaked at 154 MB).
    @Test func tooManyValuesAreRefusedBeforeComposing() {
        let scalars = "beacons: [" + String(repeating: "1,", count: 524_287) + "1]"
        let refused = refusal(scalars)
        #expect(refused?.message.contains("more than \(ScenarioParser.maximumValues) values") == true, "\(String(describing: refused))")
        #expect(refused?.place?.line == 1 && (refused?.place?.column ?? 0) > 20_000,
                "where the count ran out: \(String(describing: refused))")
    }

    private func error(_ error: ScenarioError?, lacks text: String) -> Bool {
        guard let error else { return false }
        return !error.message.contains(text)
    }

    @Test func aFileLargerThan1MiBIsRefusedNamingTheLimit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let entry = "  - {uuid: \(lobbyUUID), major: 1, minor: 2}\n"
        try ("beacons:\n" + String(repeating: entry, count: (1 << 20) / entry.utf8.count + 1))
            .write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: ScenarioError.self) {
            _ = try ScenarioParser.loadBeaconList(path: path, makeBeacon: testBeacon)
        }
        #expect(error?.description == "\(path): the file is larger than 1024 KiB (1 MiB), the most read: a list of beacons needs far less")
        #expect(throws: ScenarioError.self) { _ = try ScenarioParser.load(path: path, makeBeacon: testBeacon) }
    }
}
