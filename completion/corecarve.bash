# bash completion for corecarve(8).  Installed by `make install` into
# bash-completion's completions directory; load by hand with
#   source completion/corecarve.bash
# The options of each command are its table's (cli/cmd_<name>.c, opts.h):
# test_options checks that they agree.
# Class names come from the node policy ($CORECARVE_POLICY, else
# /etc/corecarve/policy.yaml): the names under "classes:".

_corecarve_classes()
{
	local policy=${CORECARVE_POLICY:-/etc/corecarve/policy.yaml} i
	for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
		[[ ${COMP_WORDS[i]} == --policy && $((i + 1)) -lt ${#COMP_WORDS[@]} ]] && policy=${COMP_WORDS[i + 1]}
	done
	if [[ -r $policy ]]; then
		# Two-space keys directly under "classes:" (the schema's layout).
		awk '/^classes:/ { c = 1; next } /^[^ #]/ { c = 0 } c && /^  [a-z0-9-]+:/ { sub(/^  /, ""); sub(/:.*/, ""); print }' "$policy"
	else
		# The embedded default's classes.
		echo latency throughput background isolated
	fi
}

_corecarve()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="topology plan status audit exec hook irq vm init-parent doctor capture calibrate device-plugin policy"
	local topo_src="--root --hwloc-xml --synthetic --policy"
	local table="--output --no-headers --raw --width"

	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done

	# exec: after "--" (or the command word) complete commands and files.
	if [[ $cmd == exec ]]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [[ ${COMP_WORDS[i]} == -- ]]; then
				if ((i + 1 == COMP_CWORD)); then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return
			fi
		done
	fi

	case $prev in
	--root | --state | --svg | --hwloc-xml | --policy | --config | --prometheus)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--class)
		COMPREPLY=($(compgen -W "$(_corecarve_classes)" -- "$cur"))
		return
		;;
	--smt)
		COMPREPLY=($(compgen -W "isolate full" -- "$cur"))
		return
		;;
	--memory)
		COMPREPLY=($(compgen -W "local spread any" -- "$cur"))
		return
		;;
	--irq)
		COMPREPLY=($(compgen -W "steer-away leave" -- "$cur"))
		return
		;;
	--table)
		COMPREPLY=($(compgen -W "carves cpus capacity power" -- "$cur"))
		return
		;;
	--cpus | --synthetic | --mems | --cgroup-parent | --sample-ms | --max-threads | --output | -o | --width | --vcpus)
		return
		;;
	esac

	case $cmd in
	"")
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		;;
	topology)
		COMPREPLY=($(compgen -W "$topo_src --json --svg --help" -- "$cur"))
		;;
	plan)
		COMPREPLY=($(compgen -W "--class --cpus --smt --memory --irq --state --explain --json $topo_src --raw --width --help" -- "$cur"))
		;;
	status)
		COMPREPLY=($(compgen -W "--json --svg --state --table --kernel $topo_src $table --help" -- "$cur"))
		;;
	audit)
		COMPREPLY=($(compgen -W "--json --prometheus --fix --fix= --sample-ms --max-threads --state --root --policy --set-aside-ledger $table --help" -- "$cur"))
		;;
	exec)
		COMPREPLY=($(compgen -W "--class --cpus --carve --cgroup-parent --lock-affinity --policy --state --verbose --help --" -- "$cur"))
		;;
	hook)
		COMPREPLY=($(compgen -W "createRuntime prestart poststop --root --policy --state --verbose --help" -- "$cur"))
		;;
	init-parent)
		COMPREPLY=($(compgen -W "--cpus --mems --policy --root --if-needed --dry-run --force --help" -- "$cur"))
		;;
	doctor)
		COMPREPLY=($(compgen -W "--json --problems --root --policy --state $table --help" -- "$cur"))
		;;
	capture)
		COMPREPLY=($(compgen -W "--root --policy --state --help" -- "$cur") $(compgen -d -- "$cur"))
		;;
	device-plugin)
		COMPREPLY=($(compgen -W "--dir --state --root --policy --pod-resources --grace --help" -- "$cur"))
		;;
	policy)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "quotas --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--policy --root --help -" -- "$cur"))
		fi
		;;
	calibrate)
		COMPREPLY=($(compgen -W "--rounds --ms --output --json --dry-run --root --hwloc-xml --synthetic --policy --help" -- "$cur"))
		;;
	vm)
		local sub=
		for ((i = 2; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in reconcile | status | xml) sub=${COMP_WORDS[i]} ;; esac
		done
		case $sub in
		"") COMPREPLY=($(compgen -W "reconcile status xml --help" -- "$cur")) ;;
		reconcile) COMPREPLY=($(compgen -W "--dry-run --json --verbose --config --policy --state --root --help" -- "$cur")) ;;
		status) COMPREPLY=($(compgen -W "--json --config --policy --state --root $table --help" -- "$cur")) ;;
		xml) COMPREPLY=($(compgen -W "--vcpus --config --policy --state --root --help" -- "$cur")) ;;
		esac
		;;
	irq)
		local sub=
		for ((i = 2; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in status | reconcile | notify) sub=${COMP_WORDS[i]} ;; esac
		done
		case $sub in
		"") COMPREPLY=($(compgen -W "status reconcile notify --help" -- "$cur")) ;;
		status) COMPREPLY=($(compgen -W "--json --sample-ms --state --root $table --help" -- "$cur")) ;;
		reconcile) COMPREPLY=($(compgen -W "--dry-run --verbose --state --root --policy --help" -- "$cur")) ;;
		notify) COMPREPLY=($(compgen -W "--state --help" -- "$cur")) ;;
		esac
		;;
	esac
}

complete -F _corecarve corecarve
