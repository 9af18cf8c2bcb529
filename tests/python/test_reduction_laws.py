"""metile.ReductionLaw: built-in laws verify, wrong laws are refuted with their obligation."""

import pytest

import metile

OBLIGATIONS = ["left_identity", "right_identity", "associativity", "pair_homomorphism",
               "list_homomorphism"]


@pytest.mark.parametrize("law", metile.ReductionLaw.builtins(), ids=lambda law: law.name)
def test_every_builtin_law_verifies(law):
    certificate = law.verify()
    assert certificate.law == law.name
    assert [o.name for o in certificate.obligations] == OBLIGATIONS
    exact = law.name in ("sum", "max", "min")
    for o in certificate.obligations:
        assert o.method == ("symbolic" if exact else "cases")
        assert (o.cases == 0) == exact


def test_a_law_built_from_text_verifies_and_prints_its_obligations():
    law = metile.ReductionLaw("product", state="p", element="x", identity="1",
                              merge="a.p * b.p", lift="x", finalise="p",
                              reference="exp(list_sum(log(x)))")
    text = str(law)
    for name in OBLIGATIONS:
        assert name + ":" in text
    # exp(sum(log x)) is not x1 * x2 symbolically, and log of a negative is NaN: refuted.
    with pytest.raises(metile.LawRefuted) as info:
        law.verify()
    assert info.value.obligation == "pair_homomorphism"


def test_wrong_identity_is_refuted_with_a_counterexample():
    law = metile.ReductionLaw("sum_from_one", state="s", element="x", identity="1",
                              merge="a.s + b.s", lift="x", finalise="s",
                              reference="list_sum(x)")
    with pytest.raises(metile.LawRefuted, match="fails left_identity") as info:
        law.verify()
    assert info.value.counterexample == "a = (s=1): merge(identity, a) = (2), a = (1)"
    assert isinstance(info.value, metile.CompilationError)


def test_non_associative_merge_is_refuted():
    law = metile.ReductionLaw("squares", state="s", element="x", identity="0",
                              merge="a.s + b.s + a.s * a.s * b.s * b.s", lift="x",
                              finalise="s", reference="list_sum(x)")
    with pytest.raises(metile.LawRefuted) as info:
        law.verify()
    assert info.value.obligation == "associativity"


def test_weighted_softmax_elements_and_domains():
    law = metile.ReductionLaw.weighted_softmax()
    assert law.state == ["m", "d", "n"]
    assert law.element == [("s", "finite_or_neg_inf"), ("v", "finite")]
    assert law.identity == ["-inf", "0", "0"]
    assert law.finalise == ["n / d"]


def test_malformed_laws_name_the_field():
    with pytest.raises(metile.CompilationError, match="merge reads 'c.s'"):
        metile.ReductionLaw("bad", state="s", element="x", identity="0", merge="a.s + c.s",
                            lift="x", finalise="s", reference="list_sum(x)")
    with pytest.raises(metile.CompilationError, match="unknown function 'sqrt'"):
        metile.ReductionLaw("bad", state="s", element="x", identity="0", merge="sqrt(a.s)",
                            lift="x", finalise="s", reference="list_sum(x)")
    with pytest.raises(metile.CompilationError, match="unknown element domain 'real'"):
        metile.ReductionLaw("bad", state="s", element=[("x", "real")], identity="0",
                            merge="a.s + b.s", lift="x", finalise="s", reference="list_sum(x)")
