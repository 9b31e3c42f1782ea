"""What replaces the lab's teaching shortcuts in production, each small enough to run in a cell.

`graph`: calls scheduled by what they touch instead of one batch after another; `store`: an
append-only event store on disk that a reader resumes from its last sequence number, and a
crashed turn from its calls without an outcome (at-least-once); `screen`:
a UI that renders per call id, and tells a call still being written from a confirmed one.
"""
