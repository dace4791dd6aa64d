import pytest


@pytest.mark.django_db
def test_healthz_answers_without_credentials(anonymous):
    response = anonymous.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"data": {"status": "ok"}, "meta": {}}


@pytest.mark.django_db
def test_readyz_reports_every_dependency(anonymous):
    response = anonymous.get("/readyz")

    assert response.status_code == 200
    assert response.json()["data"]["checks"] == {
        "database": "ok",
        "heavy_read": "ok",
        "cache": "ok",
        "broker": "ok",
    }


@pytest.mark.django_db
def test_unknown_url_is_404_envelope_under_the_real_urlconf(anonymous):
    response = anonymous.get("/api/v1/nowhere")

    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "Not found.", "details": {}}
    }
