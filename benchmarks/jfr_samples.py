"""The execution samples of a JFR recording, for jfr-categories.py and jfr-shares.py: (thread name, frames from the
top) per sample, whole stacks (`jfr print` stops at five frames unless asked)."""
import re
import subprocess


def samples(path):
    text = subprocess.run(['jfr', 'print', '--stack-depth', '64', '--events', 'jdk.ExecutionSample', path],
                          capture_output=True, text=True).stdout
    for event in text.split('jdk.ExecutionSample {')[1:]:
        m = re.search(r'sampledThread = "([^"]*)"', event)
        frames = re.findall(r'^\s+([\w$.<>]+)\(', event.split('stackTrace = [', 1)[-1], re.M)
        if m and frames:
            yield m.group(1), frames
