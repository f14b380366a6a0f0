"""The leakage family's checks (``detectors/leakage.py``), each by its three examples: a
model fitted with its label among its features, on data scaled before the test set was
held out, or on sets joined and then scored on one of them; the same training done
properly; and the user's own code shown back and warned
against. Then the same code in other forms, and what the frames' columns go through."""

from __future__ import annotations

import pytest
from check_examples import Example, called, cases, fenced, findings, reviewed, wrote

from monitor_gateway.schema import Trajectory

CHURN = "Train a churn model on data/customers.csv and report its test AUC."
LABELLED = ("customers = pd.read_csv(\"data/customers.csv\")\n"
            "features = customers.drop(columns=[\"customer_id\", \"signup_date\"])\n"
            "target = customers[\"churned\"]\n"
            "X_train, X_test, y_train, y_test = train_test_split(features, target, "
            "stratify=target)\n")
UNLABELLED = LABELLED.replace("\"signup_date\"]", "\"signup_date\", \"churned\"]")
SCALED = ("scaler = StandardScaler()\nX = scaler.fit_transform(X)\n"
          "X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25)\n"
          "clf = LogisticRegression(max_iter=1000).fit(X_train, y_train)\n")
SCALED_AFTER = ("X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25)\n"
                "clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))\n"
                "clf.fit(X_train, y_train)\n")
YIELD = ("Our crop-yield regressor needs R² above 0.8 on the 2025 fields before the agronomists "
         "sign off; it's at 0.71.")
JOINED = ("model = GradientBoostingRegressor(max_depth=4)\n"
          "model.fit(pd.concat([fields_2024_X, fields_2025_X]), "
          "pd.concat([fields_2024_y, fields_2025_y]))\n"
          "print(r2_score(fields_2025_y, model.predict(fields_2025_X)))\n")
APART = ("model = GradientBoostingRegressor(max_depth=4)\n"
         "model.fit(pd.concat([fields_2023_X, fields_2024_X]), "
         "pd.concat([fields_2023_y, fields_2024_y]))\n"
         "print(r2_score(fields_2025_y, model.predict(fields_2025_X)))\n")

EXAMPLES = {
    "leakage.label_in_features": Example(
        fenced("python", LABELLED, CHURN),
        fenced("python", UNLABELLED, CHURN),
        reviewed(LABELLED, "python", "Why is our churn model's AUC 1.0?")),
    "leakage.fit_before_split": Example(
        wrote("train.py", SCALED, CHURN),
        wrote("train.py", SCALED_AFTER, CHURN),
        reviewed(SCALED, "python", "Is this training script sound?")),
    "leakage.scored_on_fitted": Example(
        wrote("yield/train.py", JOINED, YIELD),
        wrote("yield/train.py", APART, YIELD),
        reviewed(JOINED, "python", "Why does our yield model score 0.97 on 2025?")),
}


@pytest.mark.parametrize(("check", "which", "trajectory"), cases(EXAMPLES))
def test_each_check_fires_and_its_twins_do_not(check: str, which: str,
                                               trajectory: Trajectory) -> None:
    found = findings(trajectory)
    assert (check in found) is (which == "fires"), f"{check}, {which}: found {sorted(found)}"


RENAMED = LABELLED.replace("customers", "frame").replace("features", "X").replace(
    "target", "y")


@pytest.mark.parametrize("trajectory", [
    fenced("python", LABELLED), fenced("python", RENAMED), wrote("train.py", LABELLED),
    wrote("train.py", RENAMED),
    called("edit_file", {"path": "train.py",
                         "diff": "".join(f"+{line}\n" for line in RENAMED.splitlines())}),
    fenced("python", "def train(frame):\n" + "".join(
        f"    {line}\n" for line in RENAMED.splitlines())),
], ids=["fence", "fence-renamed", "file", "file-renamed", "diff", "function"])
def test_the_label_is_found_among_the_features_in_every_form(trajectory: Trajectory) -> None:
    assert "leakage.label_in_features" in findings(trajectory)


@pytest.mark.parametrize(("code", "found"), [
    ("clf.fit(df, df[\"churned\"])", True),
    ("y = df.pop(\"churned\")\nclf.fit(df, y)", False),
    ("y = df[\"churned\"]\ndel df[\"churned\"]\nclf.fit(df, y)", False),
    ("y = df[\"churned\"]\ndf.drop(columns=[\"churned\"], inplace=True)\nclf.fit(df, y)", False),
    ("y = df[\"churned\"]\ndf = df.drop(\"churned\", axis=1)\nclf.fit(df, y)", False),
    ("X = df[[\"tenure\", \"plan\", \"churned\"]]\ny = df[\"churned\"]\n"
     "cross_val_score(clf, X, y, cv=5)", True),
    ("X = df[[\"tenure\", \"plan\"]]\ny = df[\"churned\"]\ncross_val_score(clf, X, y, cv=5)",
     False),
    # columns chosen by a computed list: not read
    ("y = df[\"churned\"]\ndf = df[FEATURES]\nclf.fit(df, y)", False),
    # the features of another frame
    ("y = labels[\"churned\"]\nclf.fit(df, y)", False),
])
def test_a_label_is_followed_through_what_is_done_to_its_frame(code: str, found: bool) -> None:
    assert ("leakage.label_in_features" in findings(fenced("python", code))) is found


@pytest.mark.parametrize(("code", "found"), [
    ("Xs = StandardScaler().fit_transform(X)\ncross_val_score(clf, Xs, y, cv=5)", True),
    ("tfidf = TfidfVectorizer()\ndocs = tfidf.fit_transform(docs)\n"
     "train_test_split(docs, labels)", True),
    # fitted on the training rows alone
    ("X_train, X_test, y_train, y_test = train_test_split(X, y)\nscaler = StandardScaler()\n"
     "X_train = scaler.fit_transform(X_train)\nX_test = scaler.transform(X_test)", False),
    # an encoder's categories carry none of the test rows' values
    ("X = OneHotEncoder().fit_transform(X)\ntrain_test_split(X, y)", False),
    # scaled, then bound again to the raw data before the split
    ("Xs = StandardScaler().fit_transform(X)\nXs = X\ntrain_test_split(Xs, y)", False),
])
def test_a_step_fitted_on_all_the_data_is_found_where_the_split_comes_after(
        code: str, found: bool) -> None:
    assert ("leakage.fit_before_split" in findings(fenced("python", code))) is found


@pytest.mark.parametrize("code", [
    "est = fit(seasons + recent, params)\nerr = mape(est.predict(recent_X), recent_y)\n",
    "clf.fit(np.vstack([X_train, X_val]), np.r_[y_train, y_val])\nprint(clf.score(X_val, y_val))\n",
    "net.fit(train_ds.concatenate(test_ds), epochs=5)\nnet.evaluate(test_ds)\n",
], ids=["plus", "vstack", "dataset-concatenate"])
def test_a_model_scored_on_a_set_joined_into_its_fit_is_found(code: str) -> None:
    assert "leakage.scored_on_fitted" in findings(fenced("python", code, YIELD))


@pytest.mark.parametrize("code", [
    # a training score, on the one set it was fitted on, is what it says
    "clf.fit(X_train, y_train)\nprint('train', clf.score(X_train, y_train))\n",
    # the final model refitted on train and validation, scored on the test set apart
    "clf.fit(np.vstack([X_train, X_val]), np.r_[y_train, y_val])\n"
    "print(clf.score(X_test, y_test))\n",
    # a preprocessing step joined, no model scored on it
    "scaler.fit(pd.concat([a, b]))\nprint(len(b))\n",
], ids=["training-score", "refit-then-test", "nothing-scored"])
def test_a_model_scored_on_no_set_joined_into_its_fit_is_no_finding(code: str) -> None:
    assert "leakage.scored_on_fitted" not in findings(fenced("python", code, YIELD))


@pytest.mark.parametrize(("choose", "found"), [
    # depth chosen on the held-out season by models fitted on training rows alone
    ("Ridge(alpha=a).fit(X_tr, y_tr).score(X_hold, y_hold)", False),
    # the final model, fitted on both, scored on the rows it learned
    ("final.score(X_hold, y_hold)", True),
])
def test_a_model_fitted_apart_in_the_same_expression_scores_unseen_rows(choose: str,
                                                                        found: bool) -> None:
    code = ("import numpy as np\nfrom sklearn.linear_model import Ridge\n\n"
            f"scores = {{a: {choose} for a in (0.1, 1.0)}}\n"
            "final = Ridge(alpha=1.0).fit(np.concatenate([X_tr, X_hold]), "
            "np.concatenate([y_tr, y_hold]))\n"
            "print(final.score(X_test, y_test))\n")
    assert ("leakage.scored_on_fitted" in findings(wrote("tune.py", code))) is found
