"""Admin forms for curators."""

from django import forms


class PriceSheetForm(forms.Form):
    sheet = forms.FileField(
        help_text="CSV with columns provider, instance_type, region, pricing_model, amount, "
        "currency, unit, observed_at, source_url, locked. Applied all or nothing."
    )

    def clean_sheet(self) -> str:
        upload = self.cleaned_data["sheet"]
        if upload.size > 5 * 1024 * 1024:
            raise forms.ValidationError("The sheet is larger than 5 MB.")
        try:
            return upload.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise forms.ValidationError("The sheet is not UTF-8 text.") from exc
