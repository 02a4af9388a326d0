# storages.sh: the three storages of the replay validations (scripts/validate-replay-pg
# and scripts/validate-replay-mysql source it), each slower than the one before by at
# least 2x in fio's queue-depth-1 8 KiB O_DIRECT random-read latency:
#   A   ext4 on the virtio disk (vda), as it is: $WORK/a.
#   B1  ext4 on zram0 (RAM-backed; reset afterwards): faster than A: $WORK/b1.
#   B2  ext4 on scripts/delay-storage: a loop device over an image served by
#       dbio-delayfs, which adds DELAY_US to every I/O before doing it O_DIRECT on
#       the virtio disk: slower than A by a known amount: $WORK/b2.
# The caller sets ROOT, WORK, LOG, DELAY_US and DELAY_RT_PRIO before storages_up, and
# calls storages_down on exit.

storages_up() {
  A=$WORK/a
  B1=$WORK/b1
  B2=$WORK/b2
  mkdir -p "$A" "$B1" "$B2" "$LOG"
  chmod 755 "$WORK" "$A" "$B1" "$B2"
  say "B1: ext4 on zram0"
  if mountpoint -q "$B1"; then umount "$B1"; fi
  echo 1 > /sys/block/zram0/reset
  echo 16G > /sys/block/zram0/disksize
  mkfs.ext4 -q -F /dev/zram0
  mount /dev/zram0 "$B1"
  chmod 755 "$B1"
  say "B2: ext4 on a device ${DELAY_US} us slower per I/O than the virtio disk (daemon SCHED_FIFO ${DELAY_RT_PRIO}; 0: none)"
  "$ROOT/scripts/delay-storage" down --dir "$B2" >/dev/null 2>&1 || true
  LOOP_B2=$("$ROOT/scripts/delay-storage" up --dir "$B2" --size 16G --delay-us "$DELAY_US" \
    --rt-prio "$DELAY_RT_PRIO")
  LOOP_B2=${LOOP_B2#/dev/}
}

storages_down() {
  "$ROOT/scripts/delay-storage" down --dir "$WORK/b2" >/dev/null 2>&1 || true
  if mountpoint -q "$WORK/b1"; then umount "$WORK/b1" || true; fi
  if [ -e /sys/block/zram0/reset ]; then echo 1 > /sys/block/zram0/reset 2>/dev/null || true; fi
}

dev_of() {   # DIR -> block device name
  case "$1" in "$B1"*) echo zram0 ;; "$B2"*) echo "$LOOP_B2" ;; *) echo vda ;; esac
}
majmin() { cat "/sys/block/$1/dev"; }

# fio's queue-depth-1 O_DIRECT random-read mean latency, microseconds, of BS (8k).
fio_lat() {   # DIR NAME [BS]
  fio --name=lat --filename="$1/fio-lat.file" --size=1g --rw=randread --bs="${3:-8k}" --direct=1 \
    --ioengine=psync --iodepth=1 --time_based --runtime=10 --output-format=json \
    --output="$LOG/fio-$2.json" >/dev/null 2>&1
  rm -f "$1/fio-lat.file"
  jq '.jobs[0].read.clat_ns.mean/1000' "$LOG/fio-$2.json"
}
