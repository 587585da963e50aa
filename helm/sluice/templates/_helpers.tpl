{{/*
Shared names, labels and derived settings. Everything node-independent that
more than one template needs is computed here once.
*/}}

{{/* Object name prefix: the release name, suffixed with the chart name unless it already contains it. */}}
{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "sluice.labels" -}}
{{ include "sluice.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "sluice.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* Host directory of sluiced's API socket (and parent of the default vhost-user directory). */}}
{{- define "sluice.runDir" -}}/var/run/sluice{{- end -}}

{{- define "sluice.apiSocket" -}}{{ include "sluice.runDir" . }}/sluice.sock{{- end -}}

{{/* sluice-agent's socket: mode 0660, group agent.runAsGroup, only the agent's calls. */}}
{{- define "sluice.agentApiSocket" -}}{{ include "sluice.runDir" . }}/agent.sock{{- end -}}

{{/* Where the init container writes the node's final sluiced config (an emptyDir). */}}
{{- define "sluice.bootDir" -}}/run/sluice-boot{{- end -}}

{{/* Whole CPUs for sluiced: one per PMD core plus one for the control thread. */}}
{{- define "sluice.cpus" -}}
{{- add 1 (len (splitList "," .Values.dataplane.pmdCores)) -}}
{{- end -}}

{{/* Hugepage resource name, e.g. hugepages-2Mi. */}}
{{- define "sluice.hugepageResource" -}}
hugepages-{{ .Values.hugepages.size }}
{{- end -}}

{{/* Hugepage memory as a quantity: count x page size (the schema allows only 2Mi and 1Gi pages). */}}
{{- define "sluice.hugepageAmount" -}}
{{- if eq .Values.hugepages.size "1Gi" -}}
{{- printf "%dGi" (int .Values.hugepages.count) -}}
{{- else -}}
{{- printf "%dMi" (mul 2 (int .Values.hugepages.count)) -}}
{{- end -}}
{{- end -}}

{{/*
EAL arguments. Memory: the pod's hugepages (HugePages emptyDir, all of them
reserved at start), or no-huge with a fixed size. PCI: an uplink given as a PCI address is the only device DPDK
may probe (-a); without one, --no-pci keeps DPDK off the node's other NICs.
--file-prefix keeps sluiced's runtime files apart from any DPDK pod's.
*/}}
{{- define "sluice.eal" -}}
{{- $args := list -}}
{{- if .Values.hugepages.enabled -}}
{{- /* -m takes exactly the pod's hugepage limit up front: DPDK fails at start, not with SIGBUS later. */ -}}
{{- $mb := ternary (mul 1024 (int .Values.hugepages.count)) (mul 2 (int .Values.hugepages.count)) (eq .Values.hugepages.size "1Gi") -}}
{{- $args = append $args (printf "--huge-dir /dev/hugepages -m %d" $mb) -}}
{{- else -}}
{{- $args = append $args (printf "--no-huge -m %d" (int .Values.hugepages.noHugeMemoryMB)) -}}
{{- end -}}
{{- $pci := regexFind "^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]" .Values.uplink.devargs -}}
{{- if $pci -}}
{{- $args = append $args (printf "-a %s" $pci) -}}
{{- else -}}
{{- $args = append $args "--no-pci" -}}
{{- end -}}
{{- $args = append $args "--file-prefix sluice" -}}
{{- with .Values.dataplane.extraEal -}}
{{- $args = append $args . -}}
{{- end -}}
{{- join " " $args -}}
{{- end -}}

{{/* Whether sluiced needs /dev/vfio: VF pools for DPDK pods or a PCI uplink. */}}
{{- define "sluice.needsVfio" -}}
{{- if or .Values.sriov.pools (regexMatch "^[0-9a-fA-F]{4}:" .Values.uplink.devargs) -}}true{{- end -}}
{{- end -}}

{{/*
Whether network configs differ between nodes: host-local must hand out
addresses from the node's own pod CIDR, so with per-node CIDRs the
NetworkAttachmentDefinitions carry no config and Multus reads the node's copy by
name from its confDir (written by the node-config init container).
*/}}
{{- define "sluice.perNodeNetconf" -}}
{{- if and (not .Values.networks.ipam) (or .Values.network.nodes .Values.network.podCIDRFromNode.enabled) -}}true{{- end -}}
{{- end -}}

{{/*
Dual-stack: "true" when nodes have an IPv6 pod CIDR too (network.podCIDRv6,
or spec.podCIDRs with podCIDRFromNode.ipv6). Then sluiced gets pod-cidr-v6 and
the IPAM a second range set, one address of each family per pod.
*/}}
{{- define "sluice.dualStack" -}}
{{- if or .Values.network.podCIDRv6 (and .Values.network.podCIDRFromNode.enabled .Values.network.podCIDRFromNode.ipv6) -}}true{{- end -}}
{{- end -}}

{{/* IPAM block shared by the network attachments; @NODE_POD_CIDR@ and @NODE_POD_CIDR_V6@ are filled in on the node. */}}
{{- define "sluice.ipam" -}}
{{- if .Values.networks.ipam -}}
{{- toJson .Values.networks.ipam -}}
{{- else -}}
{{- $perNode := eq (include "sluice.perNodeNetconf" .) "true" -}}
{{- $ranges := list (list (dict "subnet" (ternary "@NODE_POD_CIDR@" .Values.network.podCIDR $perNode))) -}}
{{- if include "sluice.dualStack" . -}}
{{- $ranges = append $ranges (list (dict "subnet" (ternary "@NODE_POD_CIDR_V6@" .Values.network.podCIDRv6 $perNode))) -}}
{{- end -}}
{{- toJson (dict "type" "host-local" "ranges" $ranges) -}}
{{- end -}}
{{- end -}}

{{/* The uplink block of sluiced's config; called with dict "Values" and the node's "vtep". */}}
{{- define "sluice.uplink" -}}
{{- $u := dict "devargs" .Values.uplink.devargs "vtep" .vtep -}}
{{- with .Values.uplink.mac -}}{{- $_ := set $u "mac" . -}}{{- end -}}
{{- with .Values.uplink.nextHop -}}{{- $_ := set $u "next-hop" . -}}{{- end -}}
{{- toJson $u -}}
{{- end -}}

{{/*
CNI network configuration of one Sluice network, as JSON; called with dict
"root" (the chart context), "name" and "interfaceType". The same text is the
NetworkAttachmentDefinition's spec.config and the node's copy for Multus. The
CNIDeviceInfoFile capability makes Multus pass sluice-cni a device-info path
and publish the file in the pod's network-status annotation. cniVersion
1.1.0: only then does the result carry the interface's socketPath (vhost-user)
or pciID (sriov) and mtu for Multus to pass on.
*/}}
{{- define "sluice.netconf" -}}
{{- $v := .root.Values -}}
{{- $c := dict
      "cniVersion" "1.1.0"
      "name" .name
      "type" "sluice-cni"
      "interfaceType" .interfaceType
      "apiSocket" (include "sluice.apiSocket" .root)
      "mtu" (int $v.cni.mtu)
      "ipam" (include "sluice.ipam" .root | fromJson)
      "capabilities" (dict "CNIDeviceInfoFile" true)
-}}
{{- if eq .interfaceType "vhost-user" -}}
{{- $_ := set $c "vhostMode" $v.vhostUser.mode -}}
{{- $_ := set $c "socketDir" $v.vhostUser.socketDir -}}
{{- $_ := set $c "perPodSockets" $v.vhostUser.perPodSockets -}}
{{- if $v.vhostUser.perPodSockets -}}
{{- $_ := set $c "socketVolume" $v.vhostUser.socketVolume -}}
{{- $_ := set $c "podSocketDir" $v.vhostUser.podSocketDir -}}
{{- end -}}
{{- if not (kindIs "invalid" $v.vhostUser.socketGroup) -}}
{{- $_ := set $c "socketGroup" (int64 $v.vhostUser.socketGroup) -}}
{{- end -}}
{{- if $v.networks.vhostUser.allowPodRoutedPrefixes -}}
{{- $_ := set $c "allowPodRoutedPrefixes" true -}}
{{- end -}}
{{- else -}}
{{- $_ := set $c "trust" $v.networks.sriov.trust -}}
{{- /* Multus passes deviceID itself; mac and ips come from the pod's network selection. */ -}}
{{- $_ := set $c "capabilities" (dict "CNIDeviceInfoFile" true "deviceID" true "mac" true "ips" true) -}}
{{- if .sriovMode -}}
{{- $_ := set $c "sriovMode" .sriovMode -}}
{{- end -}}
{{- $_ := set $c "spoofchk" $v.networks.sriov.spoofchk -}}
{{- if gt (int $v.networks.sriov.vlan) 0 -}}
{{- $_ := set $c "vlan" (int $v.networks.sriov.vlan) -}}
{{- end -}}
{{- end -}}
{{- toJson $c -}}
{{- end -}}

{{/*
sluice-cni's node config (the host's /etc/sluice/cni.json), as JSON: what any
network config on the node may make the root-run plugin do. cni.nodePolicy as
given (an empty directory: the plugin's default), plus socketDirRoot, which is
always sluiced's own socket directory: a network config's socketDir must equal
it anyway, and the plugin then makes and removes pod directories nowhere else;
and routedPrefixRanges when network.routedPrefixRanges is set (as sluiced
and the agent get it; absent, the plugin allows none).
*/}}
{{- define "sluice.cniNodeConfig" -}}
{{- /* Only this release's sluiced may be named as a network's apiSocket. */ -}}
{{- $n := dict "socketDirRoot" .Values.vhostUser.socketDir "apiSockets" (list (include "sluice.apiSocket" .)) -}}
{{- with .Values.network.routedPrefixRanges -}}
{{- $_ := set $n "routedPrefixRanges" . -}}
{{- end -}}
{{- range $key, $value := .Values.cni.nodePolicy -}}
{{- if ne (toString $value) "" -}}
{{- $_ := set $n $key $value -}}
{{- end -}}
{{- end -}}
{{- toJson $n -}}
{{- end -}}

{{/* The kubelet's root directory: sluice-cni links pods' socket emptyDirs below it, sluiced follows the links. */}}
{{- define "sluice.kubeletDir" -}}
{{- .Values.cni.nodePolicy.kubeletDir | default "/var/lib/kubelet" -}}
{{- end -}}

{{/* The enabled networks as a list of dicts: name, interfaceType. */}}
{{- define "sluice.networks" -}}
{{- $l := list -}}
{{- if .Values.networks.vhostUser.enabled -}}
{{- $l = append $l (dict "name" .Values.networks.vhostUser.name "interfaceType" "vhost-user") -}}
{{- end -}}
{{- if .Values.networks.sriov.enabled -}}
{{- if .Values.sriov.pools -}}
{{- /* One network per pool: the pool's device-plugin resource and its mode. */ -}}
{{- range .Values.sriov.pools -}}
{{- $l = append $l (dict "name" (printf "%s-%s" $.Values.networks.sriov.name (.name | default .pf)) "interfaceType" "sriov" "resourceName" (.resourceName | default "") "sriovMode" (ternary "dpdk" "kernel" (eq (.mode | default "") "vfio"))) -}}
{{- end -}}
{{- else -}}
{{- $l = append $l (dict "name" .Values.networks.sriov.name "interfaceType" "sriov" "resourceName" .Values.networks.sriov.resourceName) -}}
{{- end -}}
{{- end -}}
{{- toJson $l -}}
{{- end -}}

{{/*
Checks across values that JSON Schema cannot express; fails the render with
a message naming the values.
*/}}
{{/*
Whether sluice-agent (the node controller) runs: network.mode kubernetes on a
node with an uplink (without one sluiced has no overlay and no node table).
*/}}
{{- define "sluice.agentEnabled" -}}
{{- if and (eq .Values.network.mode "kubernetes") .Values.uplink.devargs -}}true{{- end -}}
{{- end -}}

{{- define "sluice.validate" -}}
{{- $pmds := splitList "," .Values.dataplane.pmdCores -}}
{{- if ne (len $pmds) (len (uniq $pmds)) -}}
{{- fail (printf "dataplane.pmdCores %q lists a core twice" .Values.dataplane.pmdCores) -}}
{{- end -}}
{{- if has (toString (int .Values.dataplane.mainCore)) $pmds -}}
{{- fail (printf "dataplane.mainCore %d is also in dataplane.pmdCores %q: the control thread needs a core of its own" (int .Values.dataplane.mainCore) .Values.dataplane.pmdCores) -}}
{{- end -}}
{{- $cidrs := dict -}}
{{- range $name, $n := .Values.network.nodes -}}
{{- if hasKey $cidrs $n.podCIDR -}}
{{- fail (printf "network.nodes: %s and %s have the same podCIDR %s" (get $cidrs $n.podCIDR) $name $n.podCIDR) -}}
{{- end -}}
{{- $_ := set $cidrs $n.podCIDR $name -}}
{{- include "sluice.validateCidr" (dict "key" (printf "network.nodes.%s.podCIDR" $name) "cidr" $n.podCIDR) -}}
{{- end -}}
{{- include "sluice.validateCidr" (dict "key" "network.podCIDR" "cidr" .Values.network.podCIDR) -}}
{{- /* Dual-stack is the whole cluster's or no node's: the networks' IPAM is shared. */ -}}
{{- $v6cidrs := dict -}}
{{- range $name, $n := .Values.network.nodes -}}
{{- if and $.Values.network.podCIDRv6 (not $n.podCIDRv6) -}}
{{- fail (printf "network.nodes.%s.podCIDRv6 is required: network.podCIDRv6 makes the cluster dual-stack, so every listed node needs its IPv6 pod CIDR" $name) -}}
{{- end -}}
{{- if and $n.podCIDRv6 (not $.Values.network.podCIDRv6) -}}
{{- fail (printf "network.nodes.%s.podCIDRv6 needs network.podCIDRv6 too (the IPv6 pod CIDR of unlisted nodes; setting it makes the cluster dual-stack)" $name) -}}
{{- end -}}
{{- if and $n.podCIDRv6 (hasKey $v6cidrs $n.podCIDRv6) -}}
{{- fail (printf "network.nodes: %s and %s have the same podCIDRv6 %s" (get $v6cidrs $n.podCIDRv6) $name $n.podCIDRv6) -}}
{{- end -}}
{{- if $n.podCIDRv6 -}}{{- $_ := set $v6cidrs $n.podCIDRv6 $name -}}{{- end -}}
{{- end -}}
{{- if and .Values.network.podCIDRFromNode.enabled .Values.network.podCIDRv6 -}}
{{- fail "network.podCIDRv6 does not apply with network.podCIDRFromNode: set network.podCIDRFromNode.ipv6: true to take each node's IPv6 pod CIDR from spec.podCIDRs" -}}
{{- end -}}
{{- if and (eq .Values.network.mode "kubernetes") .Values.network.nodes -}}
{{- fail "network.nodes is the static node table: set network.mode: static to use it (network.mode: kubernetes takes the nodes from the Kubernetes API)" -}}
{{- end -}}
{{- /* The chart's own SR-IOV network must get what it asks for from the node config it installs. */ -}}
{{- $sriov := .Values.networks.sriov -}}
{{- if and $sriov.enabled (eq $sriov.trust "on") (not .Values.cni.nodePolicy.allowVfTrust) -}}
{{- fail "networks.sriov.trust \"on\" needs cni.nodePolicy.allowVfTrust: true (sluice-cni refuses a VF with trust on unless the node config allows it)" -}}
{{- end -}}
{{- if and $sriov.enabled (eq $sriov.spoofchk "off") (not .Values.cni.nodePolicy.allowVfSpoofchkOff) -}}
{{- fail "networks.sriov.spoofchk \"off\" needs cni.nodePolicy.allowVfSpoofchkOff: true (sluice-cni refuses a VF with spoof checking off unless the node config allows it)" -}}
{{- end -}}
{{- if and .Values.networks.vhostUser.enabled (not .Values.vhostUser.perPodSockets) (not .Values.cni.nodePolicy.allowSharedSocketDir) -}}
{{- fail "vhostUser.perPodSockets false needs cni.nodePolicy.allowSharedSocketDir: true (sluice-cni refuses sockets in the socket directory all such pods mount unless the node config allows it)" -}}
{{- end -}}
{{- include "sluice.validateDpdkMemory" . -}}
{{- $_ := include "sluice.memory" . -}}
{{- end -}}

{{/*
Memory sluiced needs outside hugepages, in MiB (rounded up): a base for the
process itself (binaries, gRPC, DPDK's own heap outside -m: 256 MiB), then per
PMD the flow caches sluiced allocates at start (flowLimit megaflows x 384 B,
the signature-match cache's 8 MiB when enabled, emcEntries x 128 B), and in
no-huge mode DPDK's memory (EAL -m noHugeMemoryMB), which is ordinary memory.
*/}}
{{- define "sluice.memoryNeededMiB" -}}
{{- $c := .Values.dataplane.cache -}}
{{- $mib := 1048576 -}}
{{- /* The SMC is allocated whether or not it runs: smc-enable switches it while sluiced runs. */ -}}
{{- $perPmd := add (mul (int $c.flowLimit) 384) (mul (int $c.emcEntries) 128) (mul 8 $mib) -}}
{{- $pmds := len (splitList "," .Values.dataplane.pmdCores) -}}
{{- $bytes := add (mul 256 $mib) (mul $pmds $perPmd) (ternary 0 (mul (int .Values.hugepages.noHugeMemoryMB) $mib) .Values.hugepages.enabled) -}}
{{- div (add $bytes (sub $mib 1)) $mib -}}
{{- end -}}

{{/* A memory quantity (Ki, Mi, Gi or Ti, as the schema allows) in MiB, rounded up. */}}
{{- define "sluice.quantityMiB" -}}
{{- $n := regexFind "^[0-9]+" . | int64 -}}
{{- $unit := trimPrefix (toString $n) . -}}
{{- $kib := get (dict "Ki" 1 "Mi" 1024 "Gi" 1048576 "Ti" 1073741824) $unit | int64 -}}
{{- div (add (mul $n $kib) 1023) 1024 -}}
{{- end -}}

{{/*
The sluiced container's memory (requests = limits): the configured quantity,
refused when below what the configuration needs, or that need itself.
*/}}
{{- define "sluice.memory" -}}
{{- $needed := include "sluice.memoryNeededMiB" . | int64 -}}
{{- if .Values.memory -}}
{{- $given := include "sluice.quantityMiB" .Values.memory | int64 -}}
{{- if lt $given $needed -}}
{{- fail (printf "memory %s is below what this configuration needs: %dMi (256Mi base + per PMD dataplane.cache.flowLimit x 384 B, the SMC's 8Mi and emcEntries x 128 B%s); raise memory or leave it empty to have it computed" .Values.memory $needed (ternary "" " + hugepages.noHugeMemoryMB" .Values.hugepages.enabled)) -}}
{{- end -}}
{{- .Values.memory -}}
{{- else -}}
{{- printf "%dMi" $needed -}}
{{- end -}}
{{- end -}}

{{/*
DPDK's memory (the hugepages, or noHugeMemoryMB) must hold the mbuf pool:
each mbuf takes about 2304 B (2 KiB of data room, 128 B of headroom, the
128-byte rte_mbuf and the mempool's per-object header).
*/}}
{{- define "sluice.validateDpdkMemory" -}}
{{- $dpdkMiB := ternary (ternary (mul 1024 (int .Values.hugepages.count)) (mul 2 (int .Values.hugepages.count)) (eq .Values.hugepages.size "1Gi")) (int .Values.hugepages.noHugeMemoryMB) .Values.hugepages.enabled -}}
{{- $poolMiB := div (add (mul (int .Values.dataplane.mbufs) 2304) 1048575) 1048576 -}}
{{- if lt (int64 $dpdkMiB) (int64 $poolMiB) -}}
{{- fail (printf "dataplane.mbufs %d need %dMi of DPDK memory, more than the %dMi %s gives" (int .Values.dataplane.mbufs) $poolMiB $dpdkMiB (ternary "of hugepages (hugepages.count x hugepages.size)" "hugepages.noHugeMemoryMB" .Values.hugepages.enabled)) -}}
{{- end -}}
{{- end -}}

{{/*
sluiced refuses a pod CIDR with host bits set (10.244.1.5/24): checked here
for the value at `key` (JSON Schema checks only its shape and prefix 8..30).
*/}}
{{- define "sluice.validateCidr" -}}
{{- $parts := splitList "/" .cidr -}}
{{- $octets := splitList "." (first $parts) -}}
{{- $ip := add (mul (atoi (index $octets 0)) 16777216) (mul (atoi (index $octets 1)) 65536) (mul (atoi (index $octets 2)) 256) (atoi (index $octets 3)) -}}
{{- $block := 1 -}}
{{- range until (sub 32 (atoi (last $parts)) | int) -}}
{{- $block = mul $block 2 -}}
{{- end -}}
{{- if ne (mod $ip $block) 0 -}}
{{- fail (printf "%s %s has host bits set: sluiced needs the network address (e.g. %s)" .key .cidr "10.244.1.0/24") -}}
{{- end -}}
{{- end -}}

{{/*
sluiced's live settings (the keys its config_keys.def marks live) that the
values set, as JSON: the ConfigMap's live.json. Only keys sluiced applies
while running belong here (the config_checksum packaging test holds this to
sluiced's own list); everything else goes in the per-node configs, which the
DaemonSet's checksum/config covers.
*/}}
{{- define "sluice.liveSettings" -}}
{{- $d := .Values.dataplane -}}
{{- dict
      "log-level" $d.logLevel
      "tx-flush-interval" (int $d.txFlushInterval)
      "emc-insert-inv-prob" (int $d.cache.emcInsertInvProb)
      "smc-enable" $d.cache.smcEnable
      "pmd-max-sleep-us" (int $d.pmdMaxSleepUs)
    | toJson -}}
{{- end -}}
