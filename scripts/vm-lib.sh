# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the amd64 VM scripts share (sourced by scripts/vm-test and scripts/vm-systemd-test):
#   vm_kernel SPEC            sets vm_image, vm_version and vm_modules (its lib/modules/VERSION)
#                             for host, trixie or newest (scripts/vm-kernel)
#   vm_initramfs DIR MODULE...  puts busybox and the modules named, with what they depend on,
#                             decompressed and in load order, into DIR (DIR/modules/order); the
#                             init loads them with vm_load_modules
#   vm_results LOG NAME       prints the VMCHECK and VMINFO lines of LOG, and fails unless the
#                             checks finished with at least one pass and no failure

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
