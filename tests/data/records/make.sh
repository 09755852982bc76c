#!/bin/bash
# Remake the frozen records of this folder with magnet's own history (README.md).
# Run from the repository, with a venv holding magnet's dependencies active; each commit is
# checked out into a temporary worktree, run from its source (PYTHONPATH), and removed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tiny=$here/tiny-postprocess.yaml
make() {  # make FILE COMMIT ARGS...: FILE is the output of `magnet ARGS --json` at COMMIT
  file=$1 commit=$2; shift 2
  wt=$(mktemp -d /tmp/rec-XXXXXX) && rmdir "$wt"
  git worktree add -q --detach "$wt" "$commit"
  status=0
  (cd /tmp && PYTHONPATH=$wt python -m magnet.cli "$@" --json) > "$here/$file" || status=$?
  git worktree remove --force "$wt"
  [ $status = 0 ] || { echo "$file: $commit failed"; rm -f "$here/$file"; return 1; }
  echo "$file: $commit: magnet $* --json"
}
net=(evaluate --arch simba-chip --workload alexnet --dataflow ws)
layer=(map --arch simba-chip --layer K=64,C=64,P=56,Q=56,R=3,S=3 --dataflow ws)
make v1.json 7dc99d8 "${net[@]}"
make layer-v1.json 7dc99d8 "${layer[@]}"
make v2.json 47adc4a "${net[@]}"           # main's version 2: the operating point
# the memory branch's version 2 (DRAM bytes): 2a823e9 writes layer records; its network
# records fail (a LayerRow without bound, dram_bytes, off_chip; fixed in e6110f0), so the
# network file is of 8771a96, the branch's last commit before the merge, still version 2
make layer-v2-memory.json 2a823e9 "${layer[@]}"
make v2-memory.json 8771a96 "${net[@]}"
make v3.json e7d9a5c "${net[@]}"           # the merge of the two: version 3
make v4.json d4fde99 "${net[@]}"
make layer-v4.json d4fde99 "${layer[@]}"
# packages came while records were at version 4 (47813e1), before version 5 named them
make v4-package.json 47813e1 evaluate --arch simba-package-4 --workload alexnet --dataflow ws
make v5.json 5affb55 "${net[@]}"
make v5-package.json 5affb55 evaluate --arch simba-package-4 --workload alexnet --dataflow ws
make v6.json 4948659 "${net[@]}"
make v6-postprocess.json 4948659 evaluate --arch simba-chip --workload "$tiny" --dataflow ws
make v7.json 01e51c7 "${net[@]}"
make v8.json dfedadd "${net[@]}"
make v8-fused.json dfedadd evaluate --arch simba-package-4 --workload resnet18 --dataflow os-local-ws --fuse
make v9.json 3dc39dc "${net[@]}"
make v9-zeros.json 3dc39dc evaluate --arch eyeriss-chip --workload alexnet --densities alexnet-eyeriss
make layer-v9.json 3dc39dc "${layer[@]}"
make v10.json dc07304 "${net[@]}"         # 'network' is the DNN: the category 'noc'
make layer-v10.json dc07304 "${layer[@]}"
