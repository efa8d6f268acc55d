"""Makes the web remote's music tree: six tagged songs of 90 s (long enough to stay playing through a
test) in Artist/Album folders, two albums with a cover.png (a sox spectrogram: a real picture), made with
sox and lame. The browser tests (WebRemoteBrowserTests.swift) and scripts/web-screenshots.sh use it.

Usage: python3 web_music.py DIRECTORY   (DIRECTORY must not exist yet, or be empty)
"""

import os
import subprocess
import sys

# (path, title, artist, album, track, the sox synth effect of its sound)
SONGS = [
    ("Aurora Tones/First Light/01 Dawn.mp3", "Dawn", "Aurora Tones", "First Light", "1/3", ["sine", "330"]),
    ("Aurora Tones/First Light/02 Morning Air.mp3", "Morning Air", "Aurora Tones", "First Light", "2/3",
     ["sine", "392"]),
    ("Aurora Tones/First Light/03 High Noon.mp3", "High Noon", "Aurora Tones", "First Light", "3/3",
     ["sine", "440"]),
    ("Night Signals/Low Frequencies/01 Deep Blue.mp3", "Deep Blue", "Night Signals", "Low Frequencies", "1/2",
     ["sine", "110"]),
    ("Night Signals/Low Frequencies/02 Static Bloom.mp3", "Static Bloom", "Night Signals", "Low Frequencies",
     "2/2", ["pinknoise"]),
    ("Field Recordings/Rain on the Roof.mp3", "Rain on the Roof", "Chloé Noël", "Field Recordings",
     "1", ["brownnoise"]),
]

# Album folder → the sox command line that draws its cover (a spectrogram, 300x300).
COVERS = {
    "Aurora Tones/First Light": ["synth", "6", "pinknoise", "synth", "6", "sine", "amod", "0.7", "synth", "6", "sine",
                                 "fmod", "200-7000"],
    "Night Signals/Low Frequencies": ["synth", "6", "pinknoise", "synth", "6", "sine", "amod", "0.5"],
}
PALETTES = {"Aurora Tones/First Light": "6", "Night Signals/Low Frequencies": "4"}

SECONDS = 90


def run(command, **extra):
    result = subprocess.run(command, capture_output=True, **extra)
    if result.returncode != 0:
        sys.exit(f"web_music.py: {' '.join(command)} exited {result.returncode}: {result.stderr.decode()}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: web_music.py DIRECTORY")
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    if os.listdir(root):
        sys.exit(f"web_music.py: {root} is not empty")
    # lame reads tag text in the locale's charset.
    environment = dict(os.environ, LC_ALL="C.UTF-8")
    for path, title, artist, album, track, sound in SONGS:
        destination = os.path.join(root, path)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        wave = destination + ".wav"
        run(["sox", "-R", "-D", "-n", "-r", "22050", "-c", "1", wave, "synth", str(SECONDS), *sound, "vol", "0.3"])
        run(
            ["lame", "--quiet", "-b", "32", "--id3v2-only", "--id3v2-utf16", "--tt", title, "--ta", artist,
             "--tl", album, "--tn", track, "--ty", "2026", "--tg", "Ambient", wave, destination],
            env=environment,
        )
        os.remove(wave)
    for folder, synth in COVERS.items():
        run(["sox", "-n", "-c", "1", "-r", "16000", "-n", *synth, "spectrogram", "-x", "300", "-y", "300", "-r",
             "-p", PALETTES[folder], "-o", os.path.join(root, folder, "cover.png")])
    print(f"made {len(SONGS)} songs and {len(COVERS)} covers in {root}")


main()
