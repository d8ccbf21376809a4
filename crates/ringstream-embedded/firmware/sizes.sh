#!/usr/bin/env bash
# The firmware's static memory, and what one connection slot costs.
#
# Builds the firmware (release) with 1 and with 4 connection slots
# (RINGSTREAM_FIRMWARE_SLOTS) and reads the two ELF files with llvm-size
# and llvm-nm (or SIZE= and NM=, e.g. size and nm): the flash image
# (.vector_table + .text + .rodata + .data), the static RAM (.data + .bss),
# and the RAM of one slot, the difference divided by 3, broken down by the
# statics that grow with the slots. The stack is not counted: it is the
# rest of RAM.
#
#   crates/ringstream-embedded/firmware/sizes.sh
set -euo pipefail
cd "$(dirname "$0")"

target=thumbv7em-none-eabihf
# llvm-size and llvm-nm, else binutils' size and nm (both read ARM ELF).
if command -v llvm-size >/dev/null && command -v llvm-nm >/dev/null; then
  SIZE=${SIZE:-llvm-size}
  NM=${NM:-llvm-nm}
else
  SIZE=${SIZE:-size}
  NM=${NM:-nm}
fi
elf_dir=${CARGO_TARGET_DIR:-target}/$target/release
out=${CARGO_TARGET_DIR:-target}/sizes
mkdir -p "$out"

few=1
many=4
for slots in "$few" "$many"; do
  RINGSTREAM_FIRMWARE_SLOTS=$slots cargo build --release --locked --target "$target" --quiet
  cp "$elf_dir/ringstream-firmware" "$out/slots-$slots.elf"
done

# The size of section $2 of ELF file $1 (0 if it has none).
section() {
  "$SIZE" -A "$1" | awk -v name="$2" '$1 == name { size = $2 } END { print size + 0 }'
}

# The size of the static whose demangled path is $2 in ELF file $1 (llvm-nm
# keeps the hash suffix, `::h0123...`; nm drops it).
symbol() {
  local hex
  hex=$("$NM" -S -C "$1" | awk -v name="$2" '$4 == name || index($4, name "::h") == 1 { print $2; exit }')
  [ -n "$hex" ] || { echo "sizes.sh: no symbol $2 in $1" >&2; exit 1; }
  echo $((16#$hex))
}

flash() {
  local f=$1
  echo $(($(section "$f" .vector_table) + $(section "$f" .text) + $(section "$f" .rodata) + $(section "$f" .data)))
}

ram() {
  local f=$1
  echo $(($(section "$f" .data) + $(section "$f" .bss)))
}

# The constants of src/server.rs, for the labels.
const() {
  sed -n "s/^pub const $1: usize = \([0-9]*\);/\1/p" src/server.rs
}
http_rx=$(const HTTP_RX)
http_tx=$(const HTTP_TX)
tcp_rx=$(const TCP_RX)
tcp_tx=$(const TCP_TX)

f1="$out/slots-$few.elf"
f4="$out/slots-$many.elf"
n=$((many - few))

# Growth per slot of one static, in bytes (exact when it divides).
per_slot() {
  local a b
  a=$(symbol "$f1" "$1")
  b=$(symbol "$f4" "$1")
  echo $(((b - a) / n))
}

ram1=$(ram "$f1")
ram4=$(ram "$f4")
slot=$(((ram4 - ram1) / n))
worker=$(per_slot ringstream_firmware::server::worker::POOL)
sockets=$(per_slot ringstream_firmware::server::SOCKET_BUFFERS)
pool=$(per_slot ringstream_firmware::server::POOL)
resources=$(per_slot ringstream_firmware::RESOURCES)
other=$((slot - worker - sockets - pool - resources))
http=$((http_rx + http_tx))

echo "| slots | flash (bytes) | static RAM, .data + .bss (bytes) |"
echo "| --- | ---: | ---: |"
echo "| $few | $(flash "$f1") | $ram1 |"
echo "| $many | $(flash "$f4") | $ram4 |"
echo
echo "One slot: $slot bytes of static RAM ((RAM($many) - RAM($few)) / $n), of which:"
echo
echo "| part | bytes per slot |"
echo "| --- | ---: |"
echo "| worker task (embassy task storage: the \`run_http_worker\` future) | $worker |"
echo "| &nbsp;&nbsp;of it, the connection's HTTP \`Buffers<$http_rx, $http_tx>\` | $http |"
echo "| &nbsp;&nbsp;of it, the rest (the handler's state, embassy's task header) | $((worker - http)) |"
echo "| TCP socket buffers (\`SocketBuffers<$tcp_rx, $tcp_tx>\`) | $sockets |"
echo "| the pool's slot (\`TcpSocket\` handle, state, wakers) | $pool |"
echo "| embassy-net's socket storage (smoltcp's TCP socket) | $resources |"
echo "| other | $other |"
