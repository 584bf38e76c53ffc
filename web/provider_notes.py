"""The providers' compliance notes (fixtures/providers/*.yaml, ``compliance_notes``) marked for
translation, so a Chinese page, the planner's mainland-China warning among them, shows them in
Chinese (locale/zh_Hans). The fixture text is the message id: after changing a note there,
change it here too and translate it; tests/web/test_labels.py fails until both are done, and
until then the note shows in English.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop

COMPLIANCE_NOTES = (
    # alibaba, huawei, tencent
    gettext_noop(
        "Mainland-China regions: the account must pass real-name verification (实名认证) before it can buy resources. Serving a website or app to the public from a mainland region needs an ICP filing (备案) for the domain, submitted through the provider. A generative-AI service offered to the public in China also falls under the 2023 Interim Measures for Generative AI Services (security assessment, algorithm filing, content and labelling duties). Hong Kong and overseas regions need no ICP filing and are sold in USD through the international site; prices there are not the CNY list prices."
    ),
    # autodl
    gettext_noop(
        "Mainland-China only. Renting requires real-name verification (实名认证) of the account. Serving a public website or app from a rented machine would need an ICP filing (备案) like any mainland host. A generative-AI service offered to the public from these machines must follow China's Interim Measures for Generative AI Services. No overseas regions; everything is billed in CNY."
    ),
    # aws
    gettext_noop(
        "The China regions (cn-north-1, cn-northwest-1) are run by local partners under a separate account system and are not listed here. The GovCloud regions (us-gov-east-1, us-gov-west-1) are listed; they need a separate GovCloud account, open only to vetted US persons and organisations."
    ),
    # azure
    gettext_noop(
        "Global Azure regions only. Azure China (21Vianet) is a separately operated cloud and is not listed here."
    ),
    # coreweave
    gettext_noop(
        "US company; General Access regions in the US and Spain (EU-SOUTH). Dedicated Access zones are reserved for contracted customers. No mainland-China presence."
    ),
    # lambda
    gettext_noop(
        "US company; regions in the US, Europe, Israel, India, Japan and Australia. Sales tax/VAT is added by billing location. No mainland-China presence."
    ),
    # runpod
    gettext_noop(
        "US company; Secure Cloud data centers in North America and Europe, Community Cloud hosts worldwide. Prepaid credits; no mainland-China presence."
    ),
    # vastai
    gettext_noop(
        "Marketplace: Vast.ai (San Francisco) brokers rentals on machines run by independent hosts, from home rigs to data centers, in many countries (including some hosts in mainland China); 'verified' and 'datacenter' host tiers exist. Prepaid credits; no SLA."
    ),
)
