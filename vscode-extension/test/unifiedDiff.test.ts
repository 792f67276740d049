// Unified diffs: a permission preview applied forwards, a worktree's changes backwards.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyHunks, parsePatch, PatchMismatch, reverseHunks } from '../src/shared/unifiedDiff';

const before = 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n';
const after = 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n';
const edit = `--- a/calc.py
+++ b/calc.py
@@ -1,5 +1,5 @@
 def add(a, b):
-    return a - b
+    return a + b
 
 
 def mul(a, b):
`;

describe('unified diffs', () => {
  test('forwards: the file the call would make', () => {
    const [p] = parsePatch(edit);
    assert.equal(p.newPath, 'calc.py');
    assert.equal(applyHunks(before, p.hunks), after);
  });

  test('backwards: the file before the change', () => {
    const [p] = parsePatch(edit);
    assert.equal(applyHunks(after, reverseHunks(p.hunks)), before);
  });

  test('a new file and a deleted file', () => {
    const [added] = parsePatch('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    assert.equal(added.oldPath, null);
    assert.equal(applyHunks('', added.hunks), 'one\ntwo\n');
    assert.equal(applyHunks('one\ntwo\n', reverseHunks(added.hunks)), '');
  });

  test('no newline at the end of a file', () => {
    const [p] = parsePatch('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n');
    assert.equal(applyHunks('old', p.hunks), 'new');
    const [q] = parsePatch('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n');
    assert.equal(applyHunks('old', q.hunks), 'new\n');
    assert.equal(applyHunks('new\n', reverseHunks(q.hunks)), 'old');
  });

  test('a git patch with several files, a rename and a binary file', () => {
    const patch = `diff --git a/a.txt b/a.txt
index 1..2 100644
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
 keep
-x
+y
diff --git a/img.png b/img.png
new file mode 100644
Binary files /dev/null and b/img.png differ
diff --git a/old.md b/new.md
similarity index 100%
rename from old.md
rename to new.md
`;
    const files = parsePatch(patch);
    assert.deepEqual(files.map((f) => [f.oldPath, f.newPath, f.binary, f.hunks.length]), [
      ['a.txt', 'a.txt', false, 1],
      ['img.png', 'img.png', true, 0],
      ['old.md', 'new.md', false, 0],
    ]);
  });

  test('a file that changed since the diff is refused', () => {
    const [p] = parsePatch(edit);
    assert.throws(() => applyHunks('something else\n', p.hunks), PatchMismatch);
  });

  test('a removed line that looks like a header stays in its hunk', () => {
    const [p] = parsePatch('--- a/x\n+++ b/x\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n');
    assert.equal(applyHunks('-- not a header\nkeep\n', p.hunks), 'keep\n');
  });
});
