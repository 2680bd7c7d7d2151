"""Thin asset definitions, in the order of the flow: sources -> fragments -> evidence -> judgement -> verdict."""
