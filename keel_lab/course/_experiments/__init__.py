"""The lab's experiments: `registry` names each one and the parameters it takes from the CLI,
`report` is what each returns. Importing this package loads neither, so a check that borrows
one experiment's module loads that module alone."""
