#!/bin/sh
# 02-irq-facts: the virtio devices run.sh attaches exist, and what their
# interrupts look like. virtio-blk with 4 queues gets kernel-managed IRQs
# (affinity spread by the kernel; smp_affinity writes are refused: EIO on
# 6.1, EPERM on 6.12); virtio-net's and the config IRQs are movable.
# corecarve steers movable IRQs away from carved CPUs and must cope with the
# managed ones.
set -eu
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /e2e/lib.sh

check virtio-net-eth0 test -e /sys/class/net/eth0
check virtio-blk-vda test -e /sys/block/vda
nq=$(find /sys/block/vda/mq -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
check_eq virtio-blk-4-queues 4 "$nq"
# virtioN names of the two devices (PCI order decides N).
net=$(basename "$(readlink -f /sys/class/net/eth0/device)")
blk=$(basename "$(readlink -f /sys/block/vda/device)")
info "virtio-net is $net, virtio-blk is $blk"

# /proc/interrupts rows for virtio: "IRQ: counts... chip hwirq-edge name"
virq=$(awk '$NF ~ /^virtio/ { sub(":", "", $1); print $1 "=" $NF }' /proc/interrupts | tr '\n' ' ')
info "virtio IRQs: $virq"
if [ -n "$virq" ]; then pass virtio-irqs-present; else fail virtio-irqs-present "no virtio rows in /proc/interrupts"; fi

blk_queues=0
blk_managed=0
net_queues=0
net_movable=0
for kv in $virq; do
	irq=${kv%%=*}
	name=${kv#*=}
	d=/proc/irq/$irq
	aff=$(cat "$d/smp_affinity_list" 2>/dev/null || echo '?')
	eff=$(cat "$d/effective_affinity_list" 2>/dev/null || echo '?')
	if err=$( (echo 0 >"$d/smp_affinity_list") 2>&1); then
		res=ok
		movable=1
		echo "$aff" >"$d/smp_affinity_list" 2>/dev/null || true
	else
		res="refused(${err##*: })"
		movable=0
	fi
	info "irq $irq $name affinity=$aff effective=$eff write0=$res"
	case $name in
	"$blk"-req.*)
		blk_queues=$((blk_queues + 1))
		[ $movable = 1 ] || blk_managed=$((blk_managed + 1))
		;;
	"$net"-input.* | "$net"-output.*)
		net_queues=$((net_queues + 1))
		[ $movable = 0 ] || net_movable=$((net_movable + 1))
		;;
	esac
done
check_eq blk-queue-irqs 4 "$blk_queues"
check_eq blk-queue-irqs-managed 4 "$blk_managed"
check_match net-queue-irqs '[1-9]*' "$net_queues"
check_eq net-queue-irqs-movable "$net_queues" "$net_movable"
other=$(awk '$1 ~ /^[0-9]+:$/ && $NF !~ /^virtio/ { sub(":", "", $1); printf "%s=%s ", $1, $NF }' /proc/interrupts)
info "other IRQs: $other"
info "PCI NUMA node of $blk: $(cat "/sys/block/vda/device/../numa_node" 2>/dev/null || echo '?')"
