#!/bin/sh
# Counts to 600, one step per 0.1 s, saving its step in $JIKKEN_CHECKPOINT_DIR every 50 steps
# (write then rename: a save is whole or absent). It starts from the saved step.
ck="$JIKKEN_CHECKPOINT_DIR/step"
i=0
[ -f "$ck" ] && i=$(cat "$ck")
start=$i
echo "attempt $JIKKEN_ATTEMPT resumed=${JIKKEN_RESUMED:-0} starts at step $i"
trap 'echo "attempt $JIKKEN_ATTEMPT warned (USR1) at step $i"' USR1
while [ "$i" -lt 600 ]; do
  sleep 0.1
  i=$((i + 1))
  echo "attempt $JIKKEN_ATTEMPT step $i computed"
  if [ $((i % 50)) -eq 0 ]; then echo "$i" > "$ck.tmp"; mv "$ck.tmp" "$ck"; echo "attempt $JIKKEN_ATTEMPT saved checkpoint at step $i"; fi
done
echo "attempt $JIKKEN_ATTEMPT done at step $i (computed $((i - start)) steps)"
