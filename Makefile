# Shortcuts for the scripts in scripts/; the scripts work without make too.
.PHONY: run test setup bench-audio fixtures format clean

run:
	scripts/run.sh

test:
	scripts/test.sh

setup:
	scripts/setup.sh test

bench-audio:
	scripts/bench-audio.sh

fixtures:
	Fixtures/make-fixtures.sh

format:
	swift format format --in-place --recursive Package.swift Sources Tests

clean:
	rm -rf .build .bench
