# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the amd64 VM scripts share (sourced by scripts/vm-test and scripts/vm-systemd-test):
#   vm_packages               what the VM checks run on (QEMU, the host's kernel, busybox, BlueZ's
#                             tools...), installed by each script that boots one: steps started
#                             side by side on a new machine each wait for them (install-deps locks)
#   vm_kernel SPEC            sets vm_image, vm_version and vm_modules (its lib/modules/VERSION)
#                             for host, trixie or newest (scripts/vm-kernel)
#   vm_initramfs DIR MODULE...  puts busybox and the modules named, with what they depend on,
#                             decompressed and in load order, into DIR (DIR/modules/order); the
#                             init loads them with vm_load_modules
#   vm_boot NAME CONSOLE OUTPUT COMMAND...  runs COMMAND (the VM), its output into OUTPUT; when the guest's kernel panicked before
#                             the init said VM-BOOTED (before anything of ours ran), says so and
#                             boots again, at most VM_BOOT_ATTEMPTS times in all (default 3)
#   vm_results LOG NAME       prints the VMCHECK and VMINFO lines of LOG, and fails unless the
#                             checks finished with at least one pass and no failure

vm_packages() {
    scripts/install-deps qemu-system-x86 linux-image-amd64 busybox-static bluez bluez-test-tools bluez-hcidump cpio \
        libcap2-bin dbus python3-dbus python3-gi kmod xz-utils zstd
    scripts/install-deps
}

vm_kernel() {
    local base
    base=$(scripts/vm-kernel "$1")
    if [ "$base" = / ]; then
        vm_image=$(ls /boot/vmlinuz-* | sort -V | tail -n 1)
    else
        vm_image=$(ls "$base"/boot/vmlinuz-* | sort -V | tail -n 1)
    fi
    vm_version=${vm_image##*/vmlinuz-}
    vm_modules=$base/lib/modules/$vm_version
    vm_base=$base
    [ -f "$vm_modules/modules.dep" ] || { echo "vm: no modules for $vm_version under $base" >&2; return 1; }
}

vm_initramfs() {
    local dir=$1 kind path name
    shift
    mkdir -p "$dir"/{bin,dev,proc,sys,host,modules}
    cp /bin/busybox "$dir/bin/busybox"
    : >"$dir/modules/order"
    # modprobe's own resolution for that kernel: renamed and built-in modules (7.x builds some
    # in) come out right; its lines are "insmod PATH" or "builtin NAME".
    while read -r kind path _; do
        [ "$kind" = insmod ] || continue
        name=$(basename "$path")
        name=${name%%.ko*}.ko
        grep -qx "$name" "$dir/modules/order" && continue
        case $path in
            *.xz) xz -dc "$path" ;;
            *.zst) zstd -dcq "$path" ;;
            *.gz) gzip -dc "$path" ;;
            *) cat "$path" ;;
        esac >"$dir/modules/$name"
        echo "$name" >>"$dir/modules/order"
    done < <(modprobe -d "$vm_base" -S "$vm_version" --show-depends -a "$@")
}

# For the init (busybox sh), as text to put in it.
vm_load_modules='while read -r m; do insmod /modules/$m; done </modules/order'

vm_boot() {
    local name=$1 console=$2 output=$3 attempt=1 attempts=${VM_BOOT_ATTEMPTS:-3} panic
    shift 3
    while :; do
        "$@" >"$output" 2>&1 || true
        grep -aq '^VM-BOOTED' "$console" && return 0
        panic=$(grep -a -m 1 'Kernel panic' "$console" | sed 's/\r$//') || true
        [ -n "$panic" ] && [ "$attempt" -lt "$attempts" ] || return 0
        # Under emulation a guest kernel panics while booting now and then (an oops in its own
        # timers, before userspace); nothing of ours has run, so it is the boot that is repeated,
        # and the output says so.
        echo "$name: the guest kernel panicked while booting, before any check ran (${panic#*] }); booting again (attempt $((attempt + 1)) of $attempts); its console:" >&2
        grep -a -B 2 -A 3 'RIP:\|BUG\|Oops' "$console" | head -n 12 >&2 || true
        attempt=$((attempt + 1))
    done
}

vm_results() {
    local log=$1 name=$2 passed failed
    grep -a '^VMCHECK' "$log" | sed 's/\r$//' || true
    if ! grep -aq '^VM-DONE' "$log"; then
        echo "$name: the checks did not finish; console:" >&2
        tail -n 40 "$log" >&2
        return 1
    fi
    passed=$(grep -ac '^VMCHECK PASS' "$log" || true)
    failed=$(grep -ac '^VMCHECK FAIL' "$log" || true)
    echo "$name: $passed passed, $failed failed"
    grep -a '^VMINFO' "$log" | sed 's/\r$//' || true
    if [ "$failed" -ne 0 ]; then
        echo "$name: the console's last lines:" >&2
        grep -av '^VMCHECK' "$log" | tail -n 30 >&2
    fi
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
