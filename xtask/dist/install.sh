#!/bin/sh
# Installs the bpftools tarball's contents.
#   ./install.sh                          # into /usr/local
#   PREFIX=/usr ./install.sh              # into /usr
#   DESTDIR=/tmp/root ./install.sh        # staged, for packaging
#   PROGRAM_PREFIX=bpf- ./install.sh      # bpf-execsnoop ..., where names clash
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-/usr/local}
pp=${PROGRAM_PREFIX:-}
root=${DESTDIR:-}
sbin=$root$prefix/sbin
man8=$root$prefix/share/man/man8
bash_dir=$root$prefix/share/bash-completion/completions
zsh_dir=$root$prefix/share/zsh/site-functions
fish_dir=$root$prefix/share/fish/vendor_completions.d
mkdir -p "$sbin" "$man8" "$bash_dir" "$zsh_dir" "$fish_dir"
# One binary runs every tool, as the link it is run through names it.
install -m 755 "$here/sbin/bpftools" "$sbin/bpftools"
for link in "$here"/sbin/*; do
	[ -L "$link" ] || continue
	name=$(basename "$link")
	new=$pp$name
	ln -sf bpftools "$sbin/$new"
	install -m 644 "$here/man/man8/$name.8.gz" "$man8/$new.8.gz"
	# Completions are written for the plain name; under a prefix they are
	# registered for the new name too.
	install -m 644 "$here/completions/bash/$name" "$bash_dir/$new"
	sed "1s/^#compdef $name\$/#compdef $new/" "$here/completions/zsh/_$name" >"$zsh_dir/_$new"
	sed "s/^complete -c $name /complete -c $new /" "$here/completions/fish/$name.fish" >"$fish_dir/$new.fish"
	if [ -n "$pp" ]; then
		printf 'complete -F _%s -o bashdefault -o default %s\n' "$name" "$new" >>"$bash_dir/$new"
	fi
	echo "installed $sbin/$new"
done
